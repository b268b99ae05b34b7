// Package collectors turns device telemetry into points of labctl's
// telemetry schema (port, queue, rnic, flow, collector_gap) and writes them
// to sinks: the run archive as InfluxDB line protocol, and InfluxDB.
// Samples an emulated target took while no traffic ran carry the idle tag
// (point.go), so no reader mixes them with traffic.
// Nothing is dropped silently: a broken device stream, or samples a gNMI
// target coalesced (Update.Duplicates), leave a gap point. InfluxDB is
// written from a goroutine of its own, never the gNMI receive loop: a
// bounded queue, then a disk spool (spool.go) while InfluxDB is down, hung
// or behind, replayed once it answers, each point once
// (docs/telemetry.md).
//
// Must not import: emulator.
package collectors
