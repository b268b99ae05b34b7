// Package netconf configures switches over NETCONF (Juniper/go-netconf on
// SSH, host keys verified like every labctl SSH connection): lock the
// candidate, edit it, validate, commit with confirmation and a timeout,
// read back and confirm, or discard and unlock on any error.
//
// Must not import: emulator.
package netconf
