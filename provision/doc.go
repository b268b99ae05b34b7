// Package provision makes a lab's device state a declared part of a run:
// it reads every device's current settings, diffs them against the
// profiles (plan), makes exactly those changes with bounded parallelism
// (apply), and reads back to report drift (verify). It covers switch QoS
// profiles, each switch through the driver its inventory entry names
// (drivers/netconf or drivers/tofino's SDE shell, one model in
// drivers/switchqos), and RNIC profiles (drivers/connectx).
//
// It must not import the emulator.
package provision
