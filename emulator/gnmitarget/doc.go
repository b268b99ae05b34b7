// Package gnmitarget is the gNMI server of an emulated switch, built on
// openconfig/gnmi's cache and subscribe packages. The fabric twin publishes
// counter snapshots into it; subscribers get them as OpenConfig interface
// and queue counters (target = switch name) and, for what OpenConfig does
// not model (PFC per priority, current queue occupancy), SONiC-style
// COUNTERS_DB paths (target "COUNTERS_DB"). A snapshot the twin took while
// no traffic ran (PublishIdle) carries one more update in every
// notification, collectors.IdleLeaf, which collectors turn into the idle
// tag. Publishing waits until the STREAM subscribers have sent the
// previous snapshot (flow.go), so the twin, which simulates faster than
// wall time, does not outrun them and have samples coalesced away; what is
// coalesced all the same is counted (Coalesced) and reaches the
// subscriber as Update.Duplicates. The twin's scheme counters (what the
// switch's load-balancing module and its hosts' modules count: flowlets,
// reroutes ...) go under a path of the twin's own, collectors.LBRoot
// (lbcounters.go), which no vendor's model has. Restart plays a restart of the
// server (every stream ends; it serves again on the same address), for
// fault drills (emulator.Lab.RestartGNMI).
//
// Nothing outside emulator/ imports it. It imports collectors for the
// schema's names only (IdleLeaf: the mark it sends, the collector reads;
// the COUNTERS_DB counter names).
//
// Imports within labctl: only emulator/fabric, emulator/fabric/lb, collectors.
package gnmitarget
