// Package gnmitarget is the gNMI server of an emulated switch, built on
// openconfig/gnmi's cache and subscribe packages. The fabric twin publishes
// counter snapshots into it; subscribers get them as OpenConfig interface
// and queue counters (target = switch name) and, for what OpenConfig does
// not model (PFC per priority, current queue occupancy), SONiC-style
// COUNTERS_DB paths (target "COUNTERS_DB"). Publishing waits until the
// STREAM subscribers have sent the previous snapshot (flow.go), so the
// twin, which simulates faster than wall time, does not outrun them and
// have samples coalesced away.
//
// Nothing outside emulator/ imports it.
//
// Imports within labctl: only emulator/fabric.
package gnmitarget
