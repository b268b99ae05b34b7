// Package sshd is the SSH server of an emulated device. An "exec" request
// runs through the device's command handler, whose context is cancelled
// when the client hangs up or sends a signal, as a real remote process
// would be killed. A "shell" request is a plain line reader: each line of
// stdin runs through the same handler (no prompt, no terminal). "sftp" is
// served chrooted to the device's filesystem root; other subsystems
// (netconf) are plugged in by the caller. The package also makes the
// emulated lab's host keys, client key and known_hosts file.
//
// The emulator wires device behaviour in.
//
// Imports within labctl: none.
package sshd
