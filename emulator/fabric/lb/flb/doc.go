// Package flb is the FLB load-balancing module (Hu et al.): rerouting
// without a flowlet threshold, and isolation of congested flows, for
// PFC-enabled lossless fabrics.
//
// The source ToR stamps a sampled data packet's departure time (about
// every two base RTTs per path); the destination ToR takes the one-way
// delay, keeps its minimum per path as the base, and piggybacks the
// queueing part (delay minus base) on packets going back. Each data packet
// at the source ToR follows Algorithm 1 of the paper: a new flow (or one
// idle for the entry timeout) takes the least-delay path that is not an
// isolation path; an existing flow moves only to a path faster than its
// own by less than the gap since its previous packet, read from a CONGA-
// style aging counter, so the packet cannot overtake the one before it.
//
// Every switch watches the egress queue each data packet joins: past the
// isolation threshold K it sends a congestion notification (CNM) naming
// the flow and n, the number of flows congested at that port; below K
// again, a release CNM. CNMs are control packets relayed hop by hop, each
// switch sending it to the switch the flow's data came from, until the
// source ToR, which puts the flow in its isolation table, pins it to one
// of ceil(Σ 1/n) isolation paths that other flows may not use, and
// forwards the CNM to the sending host (lb.Switch.Notify) for FLB+RC
// (package hostlb/flbrc). Entries time out when not hit.
//
// Imports within labctl: only emulator/fabric/lb.
package flb
