// Package fabric is the fabric twin: it simulates the lab's network so that
// emulated runs produce the flow completion times and counters a real lab
// would. Engines implement Engine; Topology is built from an inventory.Lab.
//
// It imports inventory (public types) and emulator/fabric/lb (the
// load-balancing module interface), no scheme package: the caller passes
// modules or a registry (Config.Modules).
//
// Imports within labctl: only inventory, emulator/fabric/lb.
package fabric
