// Package tofino is labctl's driver for Tofino switches. Its SDE-shell
// part (sde*.go) sets switch QoS: it reads the traffic manager's tables
// (and the lab program's ECN and DSCP tables) with a generated bfrt_python
// script, turns them into the switchqos model per port, and writes the
// difference to an intended state with another script, each uploaded over
// SFTP and run with `run_bfshell.sh -b`. With no confirmed commit in the
// SDE shell, every write is read back, and a failed one is undone by
// writing the snapshot taken before it.
//
// It talks to switches only through drivers/ssh. It must not import the
// emulator, provision or scenarios.
package tofino
