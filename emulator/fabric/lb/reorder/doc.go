// Package reorder is the destination-ToR half of in-network reordering as
// ConWeave (SIGCOMM 2023) builds it, for every scheme that reroutes a flow
// while its packets are in flight (ConWeave, SELB, Gemma): a flow is on at
// most two paths at a time, the source ToR marks the old path's last
// packet TAIL and the new path's packets REROUTED, and the destination ToR
// holds REROUTED packets that come before the TAIL in a paused reorder
// queue of their egress port, released when the TAIL passes or when the
// predicted tail arrival time (plus a margin) has gone by.
//
// It defines the header fields both ToRs agree on (Stamp, Epoch) and the
// destination's per-flow state machine (Dest).
//
// Imports within labctl: only emulator/fabric/lb.
package reorder
