// Package tofino is labctl's driver for Tofino switches. Its image part
// (image*.go) handles switch program images: a bundle is a directory or a
// .tar.gz holding a manifest (image.yaml: name, version, target chip, P4
// program, the load-balancing scheme the program implements and its
// parameters, and every file with its sha256) beside the compiler's
// artifacts (bf-rt.json, <pipe>/context.json, <pipe>/tofino.bin or
// tofino2.bin, <program>.conf).
//
// The driver pushes a bundle over SFTP into a versioned directory on each
// switch (immutable once there), verifies the checksums on the switch with
// sha256sum, and activates a version: it stops bf_switchd, records the new
// active version in a state file on the switch, starts bf_switchd with the
// image's conf, and waits until the program is loaded. Any failure of an
// activation brings the previous image back, and both the failure and the
// rollback are reported. The state file keeps the active and previous
// versions and the last attempt, so status survives labctl restarts.
//
// It talks to switches only through drivers/ssh, with simple commands
// (no pipes or redirections). It must not import the emulator, provision
// or scenarios.
package tofino
