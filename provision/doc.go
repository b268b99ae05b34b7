// Package provision makes a lab's device state a declared part of a run:
// it reads every device's current settings, diffs them against the
// profiles (plan), makes exactly those changes with bounded parallelism
// (apply), and reads back to report drift (verify). This version covers
// RNIC profiles (drivers/connectx); switch QoS and images come next.
//
// It must not import the emulator.
package provision
