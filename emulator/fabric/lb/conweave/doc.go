// Package conweave is the ConWeave load-balancing module (Song et al.,
// SIGCOMM 2023) for RDMA fabrics: the source ToR keeps probing each flow's
// path with one RTT request at a time and, when the destination ToR's
// reply is later than θ_reply, sends the flow's next packet as the old
// path's TAIL and moves the rest to a randomly sampled path not marked
// busy; the flow is rerouted again only once the destination has seen
// that tail (a CLEAR reply), so it is on at most two paths. The
// destination ToR holds rerouted packets that overtake the tail in a
// paused reorder queue (package reorder), answers requests and tails, and
// notifies the source of ECN-marked paths, which stay busy for
// θ_path_busy. A flow idle for θ_inactive starts afresh on a sampled path.
//
// Imports within labctl: only emulator/fabric/lb.
package conweave
