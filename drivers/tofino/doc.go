// Package tofino is labctl's driver for Tofino switches, over SSH.
//
// Its image part (image*.go) handles switch program images: a bundle is a
// directory or a .tar.gz holding a manifest (image.yaml: name, version,
// target chip, P4 program, the load-balancing scheme the program
// implements and its parameters, and every file with its sha256) beside
// the compiler's artifacts (bf-rt.json, <pipe>/context.json,
// <pipe>/tofino.bin or tofino2.bin, <program>.conf). The driver pushes a
// bundle over SFTP into a versioned directory on each switch (immutable
// once there), verifies the checksums on the switch with sha256sum, and
// activates a version: it stops bf_switchd, records the new active version
// in a state file on the switch, starts bf_switchd with the image's conf,
// and waits until the program is loaded. Any failure of an activation
// brings the previous image back, and both the failure and the rollback
// are reported. The state file keeps the active and previous versions and
// the last attempt, so status survives labctl restarts.
//
// Its SDE-shell part (sde*.go) sets switch QoS: it reads the traffic
// manager's tables (and the ECN and DSCP tables of the program that runs:
// the active image's, else the lab's default) with a generated bfrt_python
// script, turns them into the switchqos model per port, and writes the
// difference to an intended state with another script, each uploaded over
// SFTP into labctl's directory and run with `run_bfshell.sh -b`. With no
// confirmed commit in the SDE shell, every write is read back, and a
// failed one is undone by writing the snapshot taken before it. The tables
// live in bf_switchd: every (cold) start of an image resets them, and the
// activation's result says so (Result.Restarted).
//
// It talks to switches only through drivers/ssh, with simple commands (no
// pipes or redirections).
//
// Must not import: emulator, provision, scenarios.
package tofino
