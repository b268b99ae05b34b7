package fabric

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// The packet engine's links and switches. A directed link's egress port
// holds per-priority FIFOs and sends strict priority (7 first), skipping
// priorities its peer has paused. A switch shares one buffer among its
// ports: lossless priorities (PFC on) are admitted while the buffer has
// room, pausing the upstream port of an ingress whose buffered bytes pass
// XoffBytes and resuming it below XonBytes, with PAUSE/RESUME frames that
// take serialisation and propagation time (pfc.go); lossy priorities are admitted
// under a dynamic threshold (DTAlpha x free buffer) and dropped beyond it.
// Data packets are ECN-marked at egress enqueue by RED on the queue depth.

const (
	ctrlPrio   = 7  // ACK, NACK, CNP
	pauseBytes = 64 // a PFC frame on the wire
)

// plink is a directed link's state in the packet engine. Fields are laid
// out by use: what every packet reads first (one cache line), then the
// queues (one line per priority's queue), then the ingress accounting of
// the far end; the rest is read by PFC frames, DRR, reorder queues and
// error messages. On a fabric of a thousand hosts the links' state does
// not fit in a core's cache, and a layout in declaration order had a
// packet's hop touch seven of a link's fifteen lines.
type plink struct {
	rate     float64 // bits per ns
	delay    int64   // ns
	sw       int32   // switch index of the egress side
	swTo     int32   // switch index of the far side (-1: a host)
	busy     bool
	atSwitch bool  // egress of a switch (else a host NIC)
	deqHook  bool  // its switch's module is an lb.Dequeuer
	rqMask   uint8 // bit p: rqPkts[p] > 0
	qMask    uint8 // bit p: q[p] holds packets (push, pop)
	paused   [8]bool
	xoffSent [8]bool
	_        [15]byte // the queues start on a line of their own

	q [8]fifo
	// ingress accounting at this link's far end (a switch): bytes buffered
	// there that came over this link, per priority
	inBytes [8]int64

	pauseSince [8]int64
	xoffAt     [8]int64 // ps: when the PAUSE now in force was sent
	waiting    []int32  // QPs waiting for this NIC port to take a packet
	spare      []int32  // wake's second list

	// PFC timing (pfc.go)
	pauseUntil [8]int64  // ps: when the pause in force runs out unless refreshed
	xoffGen    [8]uint16 // XOFF episode of the far end, for its refresh timer

	// deficit round robin among data priorities
	deficit [8]int64
	rr      int
	visited bool
	// reorder queues (preorder.go): the resumed ones per priority, as a
	// list of indexes+1 in PacketEngine.rqs, the packets they hold, and
	// how many the port has allocated
	rqHead, rqTail, rqPkts [8]int32
	rqUsed                 int32

	from, fromPort, to string   // the topology's names (modules, errors)
	_                  [32]byte // a whole number of lines: links in an array keep the layout
}

// push queues packet p at priority prio of link l.
func (l *plink) push(prio uint8, p *packet) {
	l.q[prio].push(p)
	l.qMask |= 1 << prio
}

// pop takes the next packet of priority prio of link l's own queue, nil if
// it is empty.
func (l *plink) pop(prio int) *packet {
	p := l.q[prio].pop()
	if l.q[prio].n == 0 {
		l.qMask &^= 1 << prio
	}
	return p
}

// psPer is the serialisation time of n bytes on l, in ps.
func (l *plink) psPer(n int32) int64 { return int64(float64(n) * 8000 / l.rate) }

// lossless reports whether switch sw keeps priority prio lossless.
func (e *PacketEngine) lossless(sw int32, prio uint8) bool {
	c := &e.swc[sw]
	return c.PFC && c.LosslessPrios&(1<<prio) != 0
}

// portCfg is the settings of link l's egress port: its switch's, or the
// fabric-wide ones for a host NIC.
func (e *PacketEngine) portCfg(l *plink) *SwitchConfig {
	if l.atSwitch {
		return &e.swc[l.sw]
	}
	return &e.cfg.SwitchConfig
}

// kick starts the next transmission on an idle link.
func (e *PacketEngine) kick(li int32) {
	l := &e.links[li]
	if l.busy {
		return
	}
	prio := e.pick(l)
	if prio < 0 {
		return
	}
	var p *packet
	if l.rqMask == 0 {
		p = l.pop(prio)
	} else {
		p = e.popNext(l, prio)
	}
	l.busy = true
	c := e.ctr(li, uint8(prio))
	c.txB += int64(p.wire)
	c.txP++
	c.depth = l.q[prio].bytes
	if l.atSwitch {
		e.swUsed[l.sw] -= int64(p.wire)
		e.release(p)
		if !e.swc[l.sw].ECNAtEnqueue {
			e.maybeMark(li, p, l.q[prio].bytes)
		}
		if l.deqHook {
			e.dequeued(li, p)
		}
	}
	e.ev.push(linkEvent(e.now+l.psPer(p.wire), evTxDone, li, p))
}

// ready is whether priority p of link l has a packet it may send: in its
// own queue (qMask) or, by held (its rqMask, read once per pick), a
// resumed reorder queue's; and is not paused. It reads the link's first
// cache line only.
func (l *plink) ready(p int, held uint8) bool {
	return !l.paused[p] && (l.qMask|held)>>p&1 != 0
}

// pick chooses the priority to send from: control first, then strict
// priority or deficit round robin among the data priorities; -1 if none.
func (e *PacketEngine) pick(l *plink) int {
	held := l.rqMask
	if l.ready(ctrlPrio, held) {
		return ctrlPrio
	}
	c := e.portCfg(l)
	if c.Scheduler != "dwrr" {
		for p := ctrlPrio - 1; p >= 0; p-- {
			if l.ready(p, held) {
				return p
			}
		}
		return -1
	}
	quantum := int64(e.cfg.MTU + e.cfg.HeaderBytes)
	for tries := 0; tries < 2*ctrlPrio; tries++ {
		p := l.rr
		if l.ready(p, held) {
			if !l.visited {
				l.deficit[p] += int64(max(c.DWRRWeights[p], 1)) * quantum
				l.visited = true
			}
			if head := int64(e.nextFrom(l, p).head.wire); head <= l.deficit[p] {
				l.deficit[p] -= head
				if l.queued(p) == 1 { // the queue empties: it keeps no credit
					l.deficit[p], l.visited, l.rr = 0, false, (p+1)%ctrlPrio
				}
				return p
			}
		} else if l.queued(p) == 0 {
			l.deficit[p] = 0
		}
		l.visited, l.rr = false, (p+1)%ctrlPrio
	}
	return -1
}

// release returns a packet's bytes to its ingress account, resuming the
// upstream port when it falls to XON.
func (e *PacketEngine) release(p *packet) {
	if p.inLink < 0 {
		return
	}
	in := &e.links[p.inLink]
	if sw := in.swTo; !e.lossless(sw, p.prio) {
		return
	}
	in.inBytes[p.prio] -= int64(p.wire)
	if in.xoffSent[p.prio] && in.inBytes[p.prio] <= min(e.swc[in.swTo].XonBytes, e.xoff(in.swTo)*3/4) {
		in.xoffSent[p.prio] = false
		e.sendPFC(p.inLink, p.prio, false)
	}
}

// wake offers a host NIC port that can take a packet to the QPs waiting
// for it, in arrival order (round robin), until one puts a packet on it;
// those whose pacing time has not come reschedule themselves.
func (e *PacketEngine) wake(li int32) {
	l := &e.links[li]
	if l.atSwitch {
		return
	}
	w := l.waiting
	l.waiting = l.spare[:0]
	defer func() { l.spare = w[:0] }() // the two lists swap: no allocation
	for i, qi := range w {
		q := e.qps[qi]
		if l.q[q.prio].n > 0 || l.paused[q.prio] {
			l.waiting = append(l.waiting, qi) // its priority is still blocked
			continue
		}
		e.trySend(q)
		if l.busy && l.q[q.prio].n > 0 {
			l.waiting = append(l.waiting, w[i+1:]...) // the port has its next packet
			return
		}
	}
}

func (e *PacketEngine) onTxDone(ev event) {
	l := &e.links[ev.id]
	l.busy = false
	e.ev.push(linkEvent(e.now+l.delay*1000, evArrive, ev.id, ev.pkt))
	e.kick(ev.id)
	e.wake(ev.id)
}

// onArrive delivers a packet at the far end of its link: to the RNIC of a
// host, or through a switch to its next link.
func (e *PacketEngine) onArrive(ev event) {
	p := ev.pkt
	rc := e.ctr(ev.id, p.prio)
	rc.rxB += int64(p.wire)
	rc.rxP++
	l := &e.links[ev.id]
	if l.swTo < 0 { // a host
		e.receive(p)
		return
	}
	sw := l.swTo
	if p.kind == pktCtl && int32(p.sack) == sw {
		e.deliver(sw, p)
		return
	}
	c := &e.swc[sw]
	if c.DSCPMap && p.kind == pktData { // classify first: the LB module sees the class's queues
		if d := e.qps[p.qp].dscp; d >= 0 {
			p.prio = c.DSCPToTC[d] // never 7, the control queue (normalize)
		}
	}
	p.inLink = ev.id // the module sees it; admission does not read it
	out, rq := e.forward(sw, p)
	e.enqueue(c, sw, ev.id, out, p, rq)
	if len(e.resumes) > 0 {
		e.flushResumes()
	}
}

// enqueue admits packet p, which came over link in (-1: it starts at this
// switch), to switch sw's (settings c) egress link out (into reorder queue
// rq, or the port's own queue), or drops it.
func (e *PacketEngine) enqueue(c *SwitchConfig, sw, in, out int32, p *packet, rq lb.Queue) {
	ol := &e.links[out]
	used := e.swUsed[sw]
	lossless := e.lossless(sw, p.prio)
	switch {
	case p.prio == ctrlPrio || lossless:
		if used+int64(p.wire) > c.BufferBytes {
			e.drop(out, p)
			return
		}
	case float64(ol.q[p.prio].bytes+int64(p.wire)) > c.DTAlpha*float64(c.BufferBytes-used):
		e.drop(out, p)
		return
	}
	if c.ECNAtEnqueue {
		e.maybeMark(out, p, ol.q[p.prio].bytes)
	}
	p.inLink = in
	if rq == lb.Normal || !e.hold(out, p, rq) {
		ol.push(p.prio, p)
	}
	e.swUsed[ol.sw] += int64(p.wire)
	fq := e.ctr(out, p.prio)
	fq.depth = ol.q[p.prio].bytes
	fq.wm = max(fq.wm, fq.depth)
	if lossless && in >= 0 {
		l := &e.links[in]
		l.inBytes[p.prio] += int64(p.wire)
		if !l.xoffSent[p.prio] && l.inBytes[p.prio] > e.xoff(sw) {
			l.xoffSent[p.prio] = true
			e.sendPFC(in, p.prio, true)
		}
	}
	e.kick(out)
}

// xoff is the dynamic PFC threshold of a switch's ingress ports.
func (e *PacketEngine) xoff(sw int32) int64 {
	c := &e.swc[sw]
	free := c.BufferBytes - e.swHeadroom[sw] - e.swUsed[sw]
	return max(min(c.XoffBytes, int64(c.PFCAlpha*float64(free))), int64(2*e.cfg.MTU))
}

func (e *PacketEngine) drop(li int32, p *packet) {
	e.ctr(li, p.prio).drops++
	e.pool.put(p)
}

// maybeMark ECN-marks a data packet leaving or joining link li's queue.
func (e *PacketEngine) maybeMark(li int32, p *packet, depth int64) {
	c := &e.swc[e.links[li].sw]
	if p.kind != pktData || p.ecn || p.notECT || c.ECNPrios&(1<<p.prio) == 0 || !e.mark(c, depth) {
		return
	}
	p.ecn = true
	e.ctr(li, p.prio).ecn++
}

// mark is RED on the instantaneous depth with a switch's thresholds: 0
// below Kmin, rising linearly to Pmax at Kmax, 1 above.
func (e *PacketEngine) mark(c *SwitchConfig, depth int64) bool {
	kmin, kmax := c.ECNKminBytes, c.ECNKmaxBytes
	switch {
	case kmax <= 0 || depth <= kmin:
		return false
	case depth >= kmax:
		return true
	}
	return e.rand() < c.ECNPmax*float64(depth-kmin)/float64(kmax-kmin)
}

// rand is a xorshift64* stream seeded by Config.Seed: deterministic.
func (e *PacketEngine) rand() float64 {
	x := e.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	e.rng = x
	return float64((x*2685821657736338717)>>11) / (1 << 53)
}
