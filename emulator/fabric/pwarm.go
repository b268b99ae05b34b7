package fabric

import (
	"math/bits"
	"unsafe"
)

// warmDepth is how many non-empty buckets ahead of the current one warm
// prefetches the link and packet lines of events (some four events a
// bucket on a large fabric, so about 16 events ahead); the later stages
// run one and two buckets ahead. Chosen by a sweep of 1 to 8 at 1,024
// hosts (bench/README.md, "Third round").
const warmDepth = 4

// warmMinBytes is the size of the links' state (their plink and counter
// slots) from which the engine prefetches: 2 MB, a core's L2 on the
// machines measured. Below it the state stays in the cache and the
// prefetches would only add instructions (some 200 an event; the sweep in
// bench/README.md, "Third round").
const warmMinBytes = 2 << 20

// warmWorth is whether a fabric of n directed links is large enough for
// warm to pay.
func warmWorth(n int) bool {
	return n*int(unsafe.Sizeof(plink{})+8*unsafe.Sizeof(lctr{})) >= warmMinBytes
}

// soon is the event queue's view ahead for warm: the next non-empty
// buckets after the current one as last seen, nearest first. Buckets that
// become non-empty in between are not in it (their events were pushed
// since, so their lines are likely still in the cache); a change of
// bucket width empties it.
type soon struct {
	b     [warmDepth]int64
	n     int
	fresh bool // the queue has moved to a new bucket since warm last looked
}

// warm prefetches what the coming events will read, in stages, each using
// lines the stage before brought in, one bucket nearer:
//
//   - warmDepth buckets ahead: the link and the packet of each event;
//   - two buckets ahead: an arrival's counter slot, and at a switch its
//     QP's forwarding entry and the ingress account, at a host its QP's
//     state;
//   - the next bucket: an arrival's entry of next hops at a switch, or at a
//     host its QP's path back, and the head packet of a link whose
//     transmission ends;
//   - the next event: the egress link, queue and counter slot of an arrival
//     at a switch that forwards by ECMP (a module's choice cannot be
//     foreseen), or at a host of the link its acknowledgement leaves by.
//
// On a fabric whose state does not fit in a core's cache (a thousand
// hosts) nearly every event starts with misses on these; prefetched early,
// they overlap with the work of the events before it instead of stalling
// its own. A prefetch (prefetch.go) never waits and changes nothing: the
// run is the same whatever it fetches.
func (e *PacketEngine) warm() {
	if q := &e.ev; q.soon.fresh {
		q.soon.fresh = false
		e.warmBuckets(q)
	}
	if nx := e.ev.ahead(1); nx != nil && nx.kind() == evArrive {
		e.warmEgress(nx)
	}
}

// warmBuckets runs when the queue has taken a new bucket: it drops the
// buckets passed from soon, adds the next ones up to warmDepth,
// prefetching their events' links and packets, and runs the later stages
// on the buckets one and two ahead.
func (e *PacketEngine) warmBuckets(q *eventQueue) {
	s := &q.soon
	k := 0
	for k < s.n && s.b[k] <= q.cur {
		k++
	}
	s.n = copy(s.b[:], s.b[k:s.n])
	for s.n < warmDepth {
		last := q.cur
		if s.n > 0 {
			last = s.b[s.n-1]
		}
		b, ok := q.nextUsedAfter(last)
		if !ok {
			break
		}
		s.b[s.n] = b
		s.n++
		for n := q.last[b&q.mask]; n >= 0; n = q.link[n] {
			if ev := &q.nodes[n]; ev.kind() <= evPFC { // link events
				l := unsafe.Pointer(&e.links[ev.id])
				p := unsafe.Pointer(ev.pkt)
				if p == nil {
					p = l
				}
				prefetch2(l, p)
			}
		}
	}
	if soon := s.b[:s.n]; len(soon) > 1 {
		for n := q.last[soon[1]&q.mask]; n >= 0; n = q.link[n] {
			if ev := &q.nodes[n]; ev.kind() == evArrive {
				e.warmArrival(ev)
			}
		}
	}
	if s.n > 0 {
		for n := q.last[s.b[0]&q.mask]; n >= 0; n = q.link[n] {
			e.warmNext(&q.nodes[n])
		}
	}
}

// warmArrival prefetches what an arrival's packet leads to.
func (e *PacketEngine) warmArrival(ev *event) {
	p := ev.pkt
	c := unsafe.Pointer(e.ctr(ev.id, p.prio))
	switch l := &e.links[ev.id]; {
	case p.qp < 0:
		prefetch(c)
	case l.swTo >= 0:
		prefetch2(c, unsafe.Pointer(&e.qf[p.qp]))
		prefetch(unsafe.Pointer(&l.inBytes[p.prio]))
	case p.kind == pktData: // the receiver's state, and its way back
		q := &e.qpSlab[p.qp]
		prefetch2(c, unsafe.Pointer(&q.expected))
		prefetch(unsafe.Pointer(&q.rpath))
	default: // the sender's
		q := &e.qpSlab[p.qp]
		prefetch2(c, unsafe.Pointer(&q.sndUna))
		prefetch(unsafe.Pointer(&q.path))
	}
}

// warmNext prefetches, for an event of the next bucket, an arrival's entry
// of next hops at a switch or the packet a link sends next.
func (e *PacketEngine) warmNext(ev *event) {
	switch ev.kind() {
	case evTxDone: // the packet its link sends next, likely
		if l := &e.links[ev.id]; l.qMask != 0 {
			prefetch(unsafe.Pointer(l.q[bits.Len8(l.qMask)-1].head))
		}
	case evArrive:
		p := ev.pkt
		switch sw := e.links[ev.id].swTo; {
		case p.qp < 0:
		case sw >= 0:
			if row := e.cands[sw]; row != nil {
				prefetch(unsafe.Pointer(&row[e.hostSlot(sw, e.qf[p.qp].dst(p))]))
			}
		case p.kind == pktData: // the link its acknowledgement leaves by
			prefetch(unsafe.Pointer(unsafe.SliceData(e.qpSlab[p.qp].rpath)))
		default:
			prefetch(unsafe.Pointer(unsafe.SliceData(e.qpSlab[p.qp].path)))
		}
	}
}

// warmEgress prefetches the egress queue and counter slot of the arrival
// ev at a switch, when its next hops are known and the switch forwards by
// ECMP: what forward will choose.
func (e *PacketEngine) warmEgress(ev *event) {
	p := ev.pkt
	sw := e.links[ev.id].swTo
	if p.qp < 0 || p.route != 0 || p.kind >= pktCtl {
		return
	}
	if sw < 0 { // at a host: the link an acknowledgement leaves by
		if p.kind == pktData {
			if rp := e.qpSlab[p.qp].rpath; len(rp) > 0 {
				e.warmLink(rp[0], ctrlPrio)
			}
		}
		return
	}
	row := e.cands[sw]
	if row == nil {
		return
	}
	key, dst := e.qf[p.qp].route(p)
	id := row[e.hostSlot(sw, dst)]
	if id <= 0 {
		return
	}
	span := e.hopSpans[id-1]
	var li int32
	switch {
	case span.n == 1:
		li = e.hopFlat[span.off]
	case e.mods[sw].m == nil:
		li = e.hopFlat[span.off+int32(ecmpPick(key, e.salts[sw], int(span.n)))]
	default:
		return
	}
	e.warmLink(li, p.prio)
}

// warmLink prefetches what queueing a packet of priority prio on link li
// reads: the link's first line, the queue's and the counter slot.
func (e *PacketEngine) warmLink(li int32, prio uint8) {
	l := &e.links[li]
	prefetch2(unsafe.Pointer(l), unsafe.Pointer(&l.q[prio]))
	prefetch(unsafe.Pointer(e.ctr(li, prio)))
}
