// Package collectors turns device telemetry into points of labctl's
// telemetry schema and writes them to sinks: the run archive as InfluxDB
// line protocol, and InfluxDB. The schema (schema.go: measurements port,
// queue, rnic, rnic_ethtool, collector_gap; their tags and fields; the
// gNMI leaves each field comes from; the one gap record, gap.go) is
// spelled here only: writers and readers elsewhere use its names.
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
