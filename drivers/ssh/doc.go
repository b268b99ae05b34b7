// Package ssh is labctl's SSH driver: a pool of connections, one per
// device, built on goph and x/crypto/ssh. It always verifies host keys
// against a known_hosts file, authenticates by reference only (key file,
// ssh-agent, password from an environment variable or a file, read at
// dial time and never logged), retries dials with backoff, and redials a
// connection that broke. Commands run with per-command timeouts that kill
// the remote process; ForEach bounds parallelism across devices; files
// move over SFTP. Every call ends with its context, and opening a session
// also with its connection's end, which x/crypto/ssh alone does not
// notice (session.go).
//
// Errors name the device and address; a command's non-zero exit is a
// Result, not an error, until Result.Err is asked for.
//
// Must not import: emulator. (Its tests do, for a real SSH server.)
package ssh
