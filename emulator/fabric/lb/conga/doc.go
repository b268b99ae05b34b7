// Package conga is the CONGA load-balancing module (Alizadeh et al.,
// SIGCOMM 2014): congestion-aware flowlet switching between leaves.
//
// Every switch egress link keeps a discounting rate estimator (DRE): the
// bytes it sends, decayed by a factor α every T_dre, quantised to Q bits
// relative to what the link could send in T_dre/α. A packet pinned to a
// path by its source ToR carries a congestion field (CE) that each hop
// raises to its egress link's DRE, so at the destination ToR it holds
// the path's most loaded link. The destination ToR keeps these per source
// leaf and path (Congestion-From-Leaf) and piggybacks one (path, metric)
// pair on each packet going back to that leaf, changed metrics first,
// round robin. The source ToR keeps what it is told per destination leaf
// and path (Congestion-To-Leaf; entries not refreshed for a while age to
// 0) and, on each new flowlet (a gap longer than the flowlet timeout),
// pins the flowlet to the path whose max(local uplink DRE, remote metric)
// is least, staying on the previous path when it is among the best.
//
// Its tests also run it in the fabric engine.
//
// Imports within labctl: only emulator/fabric/lb.
package conga
