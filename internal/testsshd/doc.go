// Package testsshd starts a real OpenSSH server (Debian's openssh-server,
// /usr/sbin/sshd) on a free loopback port for a test: its own sshd_config,
// a host key and a client key generated for the test, a known_hosts file
// naming that host key, and the current user allowed in with the client
// key only. Tests that need a real SSH host (Ansible's, whose modules need
// Python and a POSIX shell the emulated lab's devices do not have) use it;
// the emulated lab's own SSH server lives in emulator/sshd.
//
// A test skips, saying why, when no sshd binary is installed
// (scripts/test.sh installs openssh-server).
//
// Only tests import it.
//
// Imports within labctl: none.
package testsshd
