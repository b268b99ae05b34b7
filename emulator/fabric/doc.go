// Package fabric is the fabric twin: it simulates the lab's network so that
// emulated runs produce the flow completion times and counters a real lab
// would. Engines implement Engine; Topology is built from an inventory.Lab.
//
// It imports inventory (public types), emulator/fabric/lb (the switch
// load-balancing module interface) and emulator/fabric/hostlb (the host
// module interface), no scheme package: the caller passes modules or
// registries (Config.Modules, Config.HostModules).
//
// Imports within labctl: only inventory, internal/registry, emulator/fabric/lb,
// emulator/fabric/hostlb.
package fabric
