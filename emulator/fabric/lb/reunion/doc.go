// Package reunion is the Reunion load-balancing module (Wang et al.):
// receiver-driven rerouting of elephant flows for RDMA training traffic.
//
// The source ToR finds elephants with a Count-Min Sketch (sized from ε
// and δ, decayed every interval) and its top t × uplinks hot flows, marks
// their packets with an elephant bit and pins every flow to a path (ECMP
// at first, a random path on a flowlet gap longer than a large FTV: the
// fallback, for mice above all). The source ToR and every switch after it
// count the distinct elephants each egress port carries in the current
// interval s; above the tolerance t a packet whose bottleneck field is
// empty gets the link's two switch IDs. The destination ToR keeps a Link
// Table (elephants per link, from each elephant's latest path) and a
// Bottleneck Link Table (last flow seen per bottleneck link) and, every s,
// sends one control packet per bottleneck link to that flow's source ToR:
// the flow, the bottleneck and the links carrying t or more elephants.
// The source ToR then marks those links full and, at its own interval's
// end, moves each named flow to the first path (from a random start)
// whose links all carry fewer than t elephants, counting it there
// (Algorithm 2).
//
// Imports within labctl: only emulator/fabric/lb, emulator/fabric/lb/reorder.
package reunion
