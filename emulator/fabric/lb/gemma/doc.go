// Package gemma is the Gemma load-balancing module for RDMA fabrics: a
// per-packet, path-aware choice at the source edge (ToR) switch, with
// reordering at the receiving edge switch.
//
// Core (spine) switches report the egress queue depth of each of their
// ports toward an edge switch to the edge switches, in control packets
// sent at a period that shortens while those queues change and lengthens
// while they are steady (report.go). Each edge switch keeps the reports in
// a downlink congestion table, (core, destination edge) to depth, and
// scans it at a fixed interval to drop entries no report has refreshed.
// At the source edge a new flow takes a random path; every later packet
// scores its flow's path, PathScore = (α·L1 + β·L2) / reference queue
// (L1: the local uplink toward the path's core; L2: that core's reported
// queue toward the destination edge), and a path scoring S_reroute or
// more is congested: the flow then moves to the lowest-scoring candidate,
// a candidate being any smooth path or any path lower than the current
// one by more than the gap (score.go). The destination edge holds
// packets that overtake the old path in a paused reorder queue (package
// reorder, as ConWeave does) and answers the old path's tail with a
// CLEAR; a flow is rerouted again only after it (source.go, dest.go).
//
// Imports within labctl: only emulator/fabric/lb, emulator/fabric/lb/reorder.
package gemma
