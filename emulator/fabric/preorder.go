package fabric

import "github.com/labctl/labctl/emulator/fabric/lb"

// Reorder queues: extra queues of a switch egress port that a module fills
// (Arriver returns one), pauses and resumes, as ConWeave's, SELB's and
// Gemma's destination ToRs hold a rerouted flow's early packets until the
// old path's tail has passed. A queue belongs to one link and priority.
// While paused it is not served; once resumed it joins its port's list of
// resumed queues, and the head of that list is served (before the port's
// own queue) as soon as the port has sent every byte its own queue had
// taken in when the resume happened: packets queued before the resume (the
// old path's tail) go first, newer ones after. A resume during Arrive
// takes effect once the packet in hand is queued, so the tail that
// triggered it goes first too. Packets in reorder queues count in the
// switch buffer and in their ingress port's PFC accounting like any.

type rqState uint8

const (
	rqFree rqState = iota
	rqPaused
	rqResumed
)

type rqueue struct {
	f      fifo
	link   int32
	prio   uint8
	state  rqState
	listed bool   // in its port's list of resumed queues
	freed  bool   // the module gave it back: release once drained
	gen    uint32 // timeout generation: a Pause or Resume cancels the last
	after  int64  // the port's own queue's byte count to pass before it is served
	next   int32  // next in the port's list (index+1; 0: none)
}

// ReorderStats count the reorder queues' use over the engine's life.
type ReorderStats struct {
	InUse, MaxInUse int   // queues allocated now, and at most at once
	Allocs          int64 // successful allocations
	Exhausted       int64 // allocations refused: the port had none left
	Timeouts        int64 // paused queues resumed by their timeout
	Fallbacks       int64 // modules' fallbacks (lb.Switch.Fallback)
}

// ReorderStats are the reorder queues' counters.
func (e *PacketEngine) ReorderStats() ReorderStats { return e.rqStats }

// rq is the reorder queue q of switch sw, or nil (a fault) if q is not
// one of sw's allocated queues.
func (e *PacketEngine) rq(sw int32, q lb.Queue) *rqueue {
	if q <= 0 || int(q) > len(e.rqs) {
		e.failf("fabric: %s: no reorder queue %d", e.sws[sw].name, q)
		return nil
	}
	r := &e.rqs[q-1]
	if r.state == rqFree || r.freed || e.links[r.link].sw != sw {
		e.failf("fabric: %s: reorder queue %d is not allocated to it", e.sws[sw].name, q)
		return nil
	}
	return r
}

func (v *swView) AllocQueue(link int32, prio int) (lb.Queue, bool) {
	e := v.e
	if link < 0 || int(link) >= len(e.links) || prio < 0 || prio > ctrlPrio {
		return lb.Normal, false
	}
	l := &e.links[link]
	if !l.atSwitch || l.sw != v.id {
		e.failf("fabric: %s: reorder queue asked on a link of %s", v.name, l.from)
		return lb.Normal, false
	}
	if n := e.cfg.ReorderQueues; n > 0 && int(l.rqUsed) >= n {
		e.rqStats.Exhausted++
		return lb.Normal, false
	}
	var i int32
	if n := len(e.rqFree); n > 0 {
		i, e.rqFree = e.rqFree[n-1], e.rqFree[:n-1]
	} else {
		e.rqs = append(e.rqs, rqueue{})
		i = int32(len(e.rqs) - 1)
	}
	r := &e.rqs[i]
	gen := r.gen
	*r = rqueue{link: link, prio: uint8(prio), gen: gen}
	l.rqUsed++
	s := &e.rqStats
	s.Allocs++
	s.InUse++
	s.MaxInUse = max(s.MaxInUse, s.InUse)
	q := lb.Queue(i + 1)
	e.pause(r, q, e.cfg.ReorderTimeoutNs)
	return q, true
}

func (v *swView) Pause(q lb.Queue, timeout int64) {
	if r := v.e.rq(v.id, q); r != nil {
		if timeout <= 0 {
			timeout = v.e.cfg.ReorderTimeoutNs
		}
		v.e.pause(r, q, timeout)
	}
}

func (e *PacketEngine) pause(r *rqueue, q lb.Queue, timeout int64) {
	if r.listed {
		e.unlist(r, q)
	}
	r.state = rqPaused
	r.gen++
	e.ev.push(qpEvent(e.now+timeout*1000, evRQTimeout, int32(q), r.gen))
}

func (v *swView) Resume(q lb.Queue) {
	if r := v.e.rq(v.id, q); r != nil && r.state == rqPaused {
		v.e.resume(r, q)
	}
}

// resume serves r after what its port's own queue holds now, or, during
// Arrive, once the packet in hand is queued.
func (e *PacketEngine) resume(r *rqueue, q lb.Queue) {
	r.state = rqResumed
	r.gen++
	if r.f.n == 0 {
		return
	}
	if e.arriving {
		e.resumes = append(e.resumes, q)
		return
	}
	e.list(r, q)
}

// list appends r to its port's resumed queues and starts the port.
func (e *PacketEngine) list(r *rqueue, q lb.Queue) {
	l := &e.links[r.link]
	r.after, r.listed, r.next = l.q[r.prio].in, true, 0
	if t := l.rqTail[r.prio]; t != 0 {
		e.rqs[t-1].next = int32(q)
	} else {
		l.rqHead[r.prio] = int32(q)
	}
	l.rqTail[r.prio] = int32(q)
	l.addHeld(r.prio, int32(r.f.n))
	e.kick(r.link)
}

// unlist takes r out of its port's resumed queues.
func (e *PacketEngine) unlist(r *rqueue, q lb.Queue) {
	l := &e.links[r.link]
	prev := int32(0)
	for i := l.rqHead[r.prio]; i != 0; prev, i = i, e.rqs[i-1].next {
		if i != int32(q) {
			continue
		}
		if prev == 0 {
			l.rqHead[r.prio] = r.next
		} else {
			e.rqs[prev-1].next = r.next
		}
		if l.rqTail[r.prio] == i {
			l.rqTail[r.prio] = prev
		}
		break
	}
	l.addHeld(r.prio, -int32(r.f.n))
	r.listed, r.next = false, 0
}

// flushResumes lists the queues resumed during Arrive, now that the
// packet in hand is queued.
func (e *PacketEngine) flushResumes() {
	for _, q := range e.resumes {
		if r := &e.rqs[q-1]; r.state == rqResumed && !r.listed && r.f.n > 0 {
			e.list(r, q)
		}
	}
	e.resumes = e.resumes[:0]
}

func (e *PacketEngine) onRQTimeout(ev event) {
	r := &e.rqs[ev.id-1]
	if r.state != rqPaused || r.gen != ev.arg {
		return
	}
	e.rqStats.Timeouts++
	e.resume(r, lb.Queue(ev.id))
}

func (v *swView) FreeQueue(q lb.Queue) {
	e := v.e
	r := e.rq(v.id, q)
	if r == nil {
		return
	}
	if r.f.n == 0 {
		e.releaseRQ(r, q)
		return
	}
	r.freed = true
	if r.state == rqPaused {
		e.resume(r, q)
	}
}

func (e *PacketEngine) releaseRQ(r *rqueue, q lb.Queue) {
	e.links[r.link].rqUsed--
	e.rqStats.InUse--
	r.state, r.freed = rqFree, false
	r.gen++
	e.rqFree = append(e.rqFree, int32(q-1))
}

func (v *swView) QueueHeld(q lb.Queue) (pkts int, bytes int64) {
	if r := v.e.rq(v.id, q); r != nil {
		return r.f.n, r.f.bytes
	}
	return 0, 0
}

func (v *swView) Fallback() { v.e.rqStats.Fallbacks++ }

// hold puts p into reorder queue q of link out; false: p goes to the
// port's own queue (q was resumed and has drained: nothing is ahead of p).
func (e *PacketEngine) hold(out int32, p *packet, q lb.Queue) bool {
	sw := e.links[out].sw
	r := e.rq(sw, q)
	switch {
	case r == nil:
		return false
	case r.link != out || r.prio != p.prio:
		e.failf("fabric: %s: a packet for link %d priority %d put in reorder queue %d of link %d priority %d",
			e.sws[sw].name, out, p.prio, q, r.link, r.prio)
		return false
	case r.state == rqResumed && !r.listed:
		if r.f.n == 0 {
			return false
		}
	}
	r.f.push(p)
	if r.listed {
		e.links[out].addHeld(p.prio, 1)
	}
	return true
}

// addHeld counts n more packets in link l's resumed reorder queues of
// priority prio.
func (l *plink) addHeld(prio uint8, n int32) {
	l.rqPkts[prio] += n
	if l.rqPkts[prio] > 0 {
		l.rqMask |= 1 << prio
	} else {
		l.rqMask &^= 1 << prio
	}
}

// queued is how many packets of priority prio link l can send: its own
// queue's and its resumed reorder queues'.
func (l *plink) queued(prio int) int { return l.q[prio].n + int(l.rqPkts[prio]) }

// nextFrom is the queue link l sends its next packet of priority prio from:
// the first resumed reorder queue once the port's own queue has sent what
// it held when that queue resumed, else the port's own.
func (e *PacketEngine) nextFrom(l *plink, prio int) *fifo {
	own := &l.q[prio]
	if h := l.rqHead[prio]; h != 0 {
		if r := &e.rqs[h-1]; own.in-own.bytes >= r.after {
			return &r.f
		}
	}
	return own
}

// popNext takes the next packet of priority prio from link l.
func (e *PacketEngine) popNext(l *plink, prio int) *packet {
	if l.rqHead[prio] == 0 {
		return l.pop(prio)
	}
	f := e.nextFrom(l, prio)
	if f == &l.q[prio] {
		return l.pop(prio)
	}
	p := f.pop()
	l.addHeld(uint8(prio), -1)
	q := lb.Queue(l.rqHead[prio])
	if r := &e.rqs[q-1]; r.f.n == 0 {
		e.unlist(r, q)
		if r.freed {
			e.releaseRQ(r, q)
		}
	}
	return p
}

// settleReorder empties every reorder queue at the end of a run.
func (e *PacketEngine) settleReorder() {
	for i := range e.rqs {
		r := &e.rqs[i]
		for p := r.f.pop(); p != nil; p = r.f.pop() {
			e.pool.put(p)
		}
		if r.state != rqFree {
			e.releaseRQ(r, lb.Queue(i+1))
		}
		r.listed, r.next = false, 0
	}
	for i := range e.links {
		l := &e.links[i]
		l.rqHead, l.rqTail, l.rqPkts, l.rqMask = [8]int32{}, [8]int32{}, [8]int32{}, 0
	}
	e.resumes = e.resumes[:0]
}
