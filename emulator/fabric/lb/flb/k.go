package flb

import "github.com/labctl/labctl/emulator/fabric/lb"

// threshold is K of an egress link (cached per link; pkt is a packet's
// size on the wire, for the serialisation a hop adds to d).
//
// The bound (Appendix A's conservative range) is K in [2dC, Q_PFC/n -
// 2dC(n-1)), d the longest one-way delay from a sender to the switch: here
// the hops from a host through the longest shortest path of any ToR to
// this switch, each the link's propagation delay plus one packet's
// serialisation, and C the link's rate. When the range is empty (large n
// or d) K is its upper end, so that isolation still comes before PFC,
// and at least one packet.
func (m *Module) threshold(sw lb.Switch, st *swState, link int32, pkt int32) int64 {
	if k := st.k[link]; k > 0 {
		return k
	}
	var k int64
	switch m.c.kMode {
	case "fixed20":
		k = m.c.buffer / 5
	case "fixed30":
		k = m.c.buffer * 3 / 10
	case "bytes":
		k = m.c.kBytes
	default:
		k = m.bound(sw, link, pkt)
	}
	st.k[link] = max(k, int64(pkt))
	return st.k[link]
}

func (m *Module) bound(sw lb.Switch, link int32, pkt int32) int64 {
	gbps := sw.LinkGbps(link)
	longest := 0
	for j := 0; j < sw.NumSwitches(); j++ {
		if j != sw.ID() && sw.SwitchTier(j) == lb.TierToR && sw.Paths(j, sw.ID()) > 0 {
			longest = max(longest, len(sw.Path(j, sw.ID(), 0)))
		}
	}
	d := float64(longest+1) * (float64(sw.LinkDelayNs(link)) + float64(pkt)*8/gbps) // ns
	twoDC := 2 * d * gbps / 8                                                       // bytes
	n := float64(m.c.boundN)
	lo, hi := twoDC, float64(m.c.pfc)/n-twoDC*(n-1)
	if hi <= lo {
		return int64(hi)
	}
	return int64(lo + m.c.kPos*(hi-lo-1))
}
