// Package collectors turns device telemetry into points of labctl's
// telemetry schema (port, queue, rnic, flow, collector_gap) and writes them
// to sinks: the run archive as InfluxDB line protocol, and InfluxDB.
// Samples an emulated target took while no traffic ran carry the idle tag
// (point.go), so no reader mixes them with traffic.
// Nothing is dropped silently: a broken device stream, or samples a gNMI
// target coalesced (Update.Duplicates), leave a gap point; a failed write
// leaves its points in a spool file and an error.
//
// Must not import: emulator.
package collectors
