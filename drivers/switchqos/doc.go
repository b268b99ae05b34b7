// Package switchqos is the one model of a switch's QoS settings (lossless
// priorities, PFC thresholds or dynamic-threshold alpha, headroom, buffer
// pools, ECN/RED per queue, the DSCP-to-traffic-class map and the egress
// scheduler) that every switch QoS driver reads back and writes: the
// NETCONF driver (drivers/netconf) and the SDE-shell driver
// (drivers/tofino). It holds the single Diff between two configurations,
// so a changed value is one difference whichever driver serves the
// switch, and the checks a configuration must pass before a device or a
// profile accepts it.
//
// Imports within labctl: none.
package switchqos
