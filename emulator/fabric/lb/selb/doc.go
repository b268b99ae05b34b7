// Package selb is the SELB load-balancing module (Hu et al., "Improving
// Availability and Scalability for RDMA Load Balancing with In-network
// Reordering") for RDMA fabrics. The source ToR samples its uplinks'
// egress queues on a timer, clusters the paths by queue length with
// k-means (Algorithm 1; the cluster with the lowest mean is the backup)
// and marks a path congested when its queue grew faster than θ over the
// last period. A flow on a congested path is moved to a random
// non-congested path of the same cluster, or, when the cluster has none,
// to the path with the shortest queue; its next packet is the old path's
// TAIL and the rest go REROUTED, and it moves again only once the
// destination ToR has seen that tail (a CLEAR), so it is on at most two
// paths. The destination ToR reorders exactly as ConWeave's does
// (package reorder).
//
// Imports within labctl: only emulator/fabric/lb.
package selb
