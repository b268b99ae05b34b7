package fabric

// The packet engine's per-packet counters. A hop used to add into the
// float accumulators of two ports (portAcc, ~900 bytes each, one heap
// object per port): five or six cache lines per hop, which on a fabric of
// a thousand hosts are all misses. Each directed link now counts what
// crosses it at one priority in one 64-byte slot of one array: what its
// sending port sent, queued and dropped or marked, and what its far port
// received. Counters and PortCounters fold the slots into the ports'
// accumulators first. The sums are integers below 2^53, so adding them at
// once gives the floats that adding packet by packet did: the counters
// read the same.

// lctr is link li's slot for priority p: e.lc[li<<3|p].
type lctr struct {
	txB, txP   int64 // sent by the link's port at this priority
	rxB, rxP   int64 // received by the far port
	drops, ecn int64 // at the sending port's queue
	depth, wm  int64 // the queue's bytes (as of its last change) and their peak
}

// ctr is link li's slot for priority p.
func (e *PacketEngine) ctr(li int32, p uint8) *lctr { return &e.lc[int(li)<<3|int(p)] }

// foldCounters adds every link's slots into its ports' accumulators.
func (e *PacketEngine) foldCounters() {
	for li := range e.links {
		e.foldLink(int32(li))
	}
}

// foldLink adds link li's slots into its two ports' accumulators and
// empties them (depth and watermark, which are levels, stay).
func (e *PacketEngine) foldLink(li int32) {
	from, to := e.lfrom[li], e.lto[li]
	for p := range 8 {
		c := &e.lc[int(li)<<3|p]
		from.txB += float64(c.txB)
		from.txP += float64(c.txP)
		from.drops += float64(c.drops)
		from.ecn += float64(c.ecn)
		fq := &from.q[p]
		fq.txB += float64(c.txB)
		fq.txP += float64(c.txP)
		fq.drops += float64(c.drops)
		fq.ecn += float64(c.ecn)
		fq.depth = float64(c.depth)
		fq.wm = max(fq.wm, float64(c.wm))
		to.rxB += float64(c.rxB)
		to.rxP += float64(c.rxP)
		to.rxPrioB[p] += float64(c.rxB)
		to.rxPrioP[p] += float64(c.rxP)
		c.txB, c.txP, c.rxB, c.rxP, c.drops, c.ecn = 0, 0, 0, 0, 0, 0
	}
}

// ClearWatermarks implements Engine: the link slots' peaks restart at
// their depths too, or the next fold would bring the old peak back.
func (e *PacketEngine) ClearWatermarks() {
	e.foldCounters()
	for i := range e.lc {
		e.lc[i].wm = e.lc[i].depth
	}
	e.portSet.clearWatermarks()
}

// portLinks lists, per port, the links whose slots count for it: the one
// it sends on and the one it receives from.
func portLinks(t *Topology) map[PortKey][]int32 {
	m := map[PortKey][]int32{}
	for i, l := range t.links {
		m[PortKey{l.from, l.fromPort}] = append(m[PortKey{l.from, l.fromPort}], int32(i))
		m[PortKey{l.to, l.toPort}] = append(m[PortKey{l.to, l.toPort}], int32(i))
	}
	return m
}
