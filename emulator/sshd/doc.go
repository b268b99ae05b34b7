// Package sshd is the SSH server of an emulated device: exec requests run
// through the device's command handler (cancelled when the client hangs up
// or sends a signal, as a real remote process would be killed), "sftp" is
// served chrooted to the device's filesystem root, and other subsystems
// (netconf) can be plugged in. It also makes the emulated lab's host keys,
// client key and known_hosts.
//
// It imports nothing of labctl.
package sshd
