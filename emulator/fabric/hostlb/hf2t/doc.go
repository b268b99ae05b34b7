// Package hf2t is HF²T, host-based flowlet fine-tuning (Chen et al.,
// APNet 2024), as a host module: an RDMA NIC paces a flow's packets so
// evenly that gaps longer than a switch's flowlet timeout almost never
// occur, and flowlet switching (LetFlow at the ToR) then behaves like
// ECMP. The sending host therefore holds the few packets that follow the
// largest gaps of a flow — those in the tail of the gap distribution it
// learned in a pre-training period, at or above T (the 99th percentile
// by default) — until the gap reaches the flowlet timeout, so that the
// ToR sees a flowlet boundary there. A multiplier α of T, from the number
// x of packets sent since the last stretched gap, keeps it from cutting
// flowlets shorter than min_thr packets and hastens cuts past max_thr
// ("dynamic T"; without it, "No Dynamic T").
//
// Imports within labctl: only emulator/fabric/hostlb, emulator/fabric/lb.
package hf2t
