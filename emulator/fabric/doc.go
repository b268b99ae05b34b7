// Package fabric is the fabric twin: it simulates the lab's network so that
// emulated runs produce the flow completion times and counters a real lab
// would. Engines implement Engine; Topology is built from an inventory.Lab.
//
// Imports within labctl: only inventory.
package fabric
