// Package ssh is labctl's SSH driver: a pool of connections (built on goph
// and x/crypto/ssh) that always verifies host keys against known_hosts,
// authenticates by reference (key file, ssh-agent, password from an
// environment variable or file), runs commands with per-device timeouts
// and bounded parallelism, and moves files over SFTP.
//
// It must not import the emulator.
package ssh
