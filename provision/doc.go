// Package provision makes a lab's device state a declared part of a run:
// it reads every device's current settings, diffs them against an Intent
// (Plan), makes exactly those changes with bounded parallelism and reads
// everything back (Apply, with a Report), or only reads back (Verify). An
// intent is any of a switch image (drivers/tofino), a switch QoS profile,
// each switch set through the driver its inventory entry names
// (drivers/netconf or drivers/tofino's SDE shell, one model in
// drivers/switchqos), and an RNIC profile (drivers/connectx). 'labctl
// provision' and the scenario runner both use Apply, so they follow the
// same rules.
//
// Must not import: emulator.
package provision
