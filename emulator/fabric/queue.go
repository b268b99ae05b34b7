package fabric

import "math"

// The fluid queue model. Between two events every rate is constant, so a
// switch egress queue changes linearly: it grows at (offered - capacity)
// where "offered" is what its flows would bring if this port were no
// constraint (each flow limited only by the links before it), and drains
// at capacity otherwise. Lossless (PFC on): the queue stops at XoffBytes and
// for as long as it is held there the ingress ports feeding it send PAUSE
// frames (one when the pause starts, then one per PAUSE refresh interval,
// and a RESUME when it ends), counted
// as PFCTx on the switch ingress port and PFCRx/PauseRxNs on the upstream
// port; pauses do not propagate further upstream in this engine. Lossy:
// the queue stops at DropBytes and the excess is dropped (counted; the flow
// still completes: retransmission is the packet engine's business). ECN
// marks are the dequeued packets times the RED probability at the mean
// depth of the interval. The RoCE priority (3) carries the queue.

const roceQueue = 3

type queueAcc struct {
	depth, wm, txB, txP, drops, ecn float64
	clearedTxP                      float64 // txP at the last watermark clear
}

type portAcc struct {
	txB, rxB, txP, rxP, drops, ecn float64
	pfcTx, pfcRx, pauseRxNs        [8]float64
	pauseTxNs, ecnRx               [8]float64
	rxPrioB, rxPrioP               [8]float64 // packet engine: received per priority
	q                              [8]queueAcc
	cnpSent, cnpHandled, ooo, retx float64 // RNIC transport (packet engine)
	nakRx, ackTimeouts, dupReq     float64
	cnpIgnored                     float64
}

// portSet holds every port's accumulators, and for each directed link the
// accumulators of its two ends; both engines count through it.
type portSet struct {
	ports      map[PortKey]*portAcc
	lfrom, lto []*portAcc
}

func newPortSet(t *Topology) portSet {
	ps := portSet{ports: map[PortKey]*portAcc{}, lfrom: make([]*portAcc, len(t.links)), lto: make([]*portAcc, len(t.links))}
	for i, l := range t.links {
		ps.lfrom[i], ps.lto[i] = ps.port(l.from, l.fromPort), ps.port(l.to, l.toPort)
	}
	return ps
}

// clearWatermarks restarts every queue's watermark at its current depth
// and remembers how many packets it had sent, as a switch's watermark
// clear does.
func (ps *portSet) clearWatermarks() {
	for _, a := range ps.ports {
		for i := range a.q {
			a.q[i].wm, a.q[i].clearedTxP = a.q[i].depth, a.q[i].txP
		}
	}
}

func (ps *portSet) port(dev, p string) *portAcc {
	k := PortKey{dev, p}
	a, ok := ps.ports[k]
	if !ok {
		a = &portAcc{}
		ps.ports[k] = a
	}
	return a
}

// linkQueue is a directed link's egress queue and what the link counted
// since its ports last had it (flushCounts): a recompute settles nearly
// every link, and the ports' accumulators are cold. Bytes and packets
// sent are the link's (flowLink): every settle counts them, while the
// queue changes only at switch ports that queue or pause.
type linkQueue struct {
	depth    float64
	pausedNs float64 // length of the current pause episode
	paused   bool
	// the queue's highest depth, ECN marks, drops
	wm, ecn, drops float64
	// PAUSE frames the link's receiving port sent back over it, and for how long
	pfc, pauseNs float64
}

// settle brings link li's counters and queue from its last settlement up
// to now, at the rates of the flows crossing it (constant in between: every
// change of them settles the link first). The counts gather on the link
// (flowLink, linkQueue).
func (e *FlowEngine) settle(li int, now int64) {
	l := &e.links[li]
	dt := now - l.last
	if dt <= 0 {
		return
	}
	l.last = now
	if l.rsum == 0 && !l.queued() {
		return
	}
	capacity := e.capacity[li]
	sent, off := l.rsum*float64(dt)/8, l.off // bytes sent; bits/ns offered to the egress queue
	pkt := float64(e.cfg.MTU + e.cfg.HeaderBytes)
	p := sent / pkt
	l.txB += sent
	l.txP += p
	if e.fromHost[li] {
		return // a NIC paces itself; switch queues only
	}
	if !l.queued() && off <= capacity {
		return // an empty queue that stays empty: nothing to mark or pause
	}
	q := &e.lq[li]
	e.fluidQueue(li, q, float64(dt), off, capacity, p, pkt)
	l.setQueued(q.depth != 0 || q.paused)
}

// fluidQueue moves link li's queue q over dt ns at offered rate off
// (bits/ns), p packets sent, each pkt bytes on the wire.
func (e *FlowEngine) fluidQueue(li int, q *linkQueue, dt, off, capacity, p, pkt float64) {
	d0 := q.depth
	d1, over := e.fluid(d0, off, capacity, dt)
	q.depth = d1
	q.wm = max(q.wm, d0, d1)
	q.ecn += p * e.markProb((d0+d1)/2)
	if over <= 0 {
		if q.paused { // RESUME: counted like every PFC frame
			e.pauseFeeders(li, 1, 0)
		}
		q.paused, q.pausedNs = false, 0
		return
	}
	if !e.cfg.PFC {
		q.drops += (off - capacity) / 8 * over / pkt
		return
	}
	before := q.pausedNs
	q.pausedNs += over
	refresh := e.cfg.refreshNs(capacity)
	frames := math.Floor(q.pausedNs/refresh) - math.Floor(before/refresh)
	if !q.paused {
		frames++
		q.paused = true
	}
	e.pauseFeeders(li, frames, over)
}

// settleAll settles every link up to now (for a sample, or the end).
func (e *FlowEngine) settleAll(now int64) {
	for li := range e.links {
		e.settle(li, now)
	}
	e.flushCounts()
}

// flushCounts moves what the links counted since the last flush to their
// ports: the sending port and its RoCE queue, and the receiving port.
func (e *FlowEngine) flushCounts() {
	for li := range e.lq {
		q := &e.lq[li]
		from := e.lfrom[li]
		fq := &from.q[roceQueue]
		fq.depth = q.depth
		to := e.lto[li]
		if q.pfc != 0 || q.pauseNs != 0 { // sent by the switch port at the link's end
			to.pfcTx[roceQueue] += q.pfc
			to.pauseTxNs[roceQueue] += q.pauseNs
			from.pfcRx[roceQueue] += q.pfc
			from.pauseRxNs[roceQueue] += q.pauseNs
			q.pfc, q.pauseNs = 0, 0
		}
		l := &e.links[li]
		if l.txB == 0 && l.txP == 0 && q.wm == 0 && q.ecn == 0 && q.drops == 0 {
			continue
		}
		from.txB += l.txB
		from.txP += l.txP
		to.rxB += l.txB
		to.rxP += l.txP
		fq.txB += l.txB
		fq.txP += l.txP
		fq.wm = max(fq.wm, q.wm)
		fq.ecn += q.ecn
		from.ecn += q.ecn
		fq.drops += q.drops
		from.drops += q.drops
		l.txB, l.txP, q.wm, q.ecn, q.drops = 0, 0, 0, 0, 0
	}
}

// pauseFeeders counts PAUSE frames on every ingress link that feeds the
// congested egress link li (once per ingress link).
func (e *FlowEngine) pauseFeeders(li int, frames, over float64) {
	seen := e.feeders[:0] // a switch has few ports: a list will do
	l := &e.links[li]
next:
	for k := int32(0); k < l.n; k++ {
		ref := e.ref(l, k)
		if ref.hop == 0 {
			continue
		}
		in := int(e.hop(ref.f, ref.hop-1).li)
		for _, s := range seen {
			if s == in {
				continue next
			}
		}
		seen = append(seen, in)
		q := &e.lq[in]
		q.pfc += frames
		q.pauseNs += over
	}
	e.feeders = seen
}

// fluid returns the depth after dt and how long the queue sat at its cap.
func (e *FlowEngine) fluid(d0, offered, capacity, dt float64) (d1, over float64) {
	limit := float64(e.cfg.DropBytes)
	if e.cfg.PFC {
		limit = float64(e.cfg.XoffBytes)
	}
	net := (offered - capacity) / 8 // bytes per ns
	if net <= 0 {
		return max(0, d0+net*dt), 0
	}
	toCap := max(0, (limit-d0)/net)
	if dt <= toCap {
		return d0 + net*dt, 0
	}
	return limit, dt - toCap
}

func (e *FlowEngine) markProb(depth float64) float64 {
	kmin, kmax := float64(e.cfg.ECNKminBytes), float64(e.cfg.ECNKmaxBytes)
	switch {
	case kmax <= 0 || depth <= kmin:
		return 0
	case depth >= kmax:
		return 1
	default:
		return e.cfg.ECNPmax * (depth - kmin) / (kmax - kmin)
	}
}

// drainQueues empties the queues once no traffic is left.
func (e *FlowEngine) drainQueues() {
	for li, l := range e.topo.links {
		e.lq[li] = linkQueue{}
		e.links[li].txB, e.links[li].txP = 0, 0
		e.links[li].setQueued(false)
		e.port(l.from, l.fromPort).q[roceQueue].depth = 0
	}
}

// ClearWatermarks implements Engine.
func (e *FlowEngine) ClearWatermarks() {
	e.flushCounts() // the clear remembers packets sent
	e.portSet.clearWatermarks()
}

// Counters implements Engine. What the links counted since the last
// sample reaches their ports first (as the packet engine folds its
// slots), so a read after a run cut short misses nothing.
func (e *FlowEngine) Counters() *Counters {
	e.flushCounts()
	return countersOf(e.ports)
}

// PortCounters implements Engine (flushed as Counters).
func (e *FlowEngine) PortCounters(k PortKey) (PortCounters, bool) {
	e.flushCounts()
	return portCounters(e.ports, k)
}

// countersOf converts the accumulators of either engine.
func countersOf(ports map[PortKey]*portAcc) *Counters {
	c := &Counters{Ports: make(map[PortKey]*PortCounters, len(ports))}
	for k, a := range ports {
		c.Ports[k] = a.counters()
	}
	return c
}

// portCounters converts one port's accumulators of either engine.
func portCounters(ports map[PortKey]*portAcc, k PortKey) (PortCounters, bool) {
	a, ok := ports[k]
	if !ok {
		return PortCounters{}, false
	}
	return *a.counters(), true
}

func (a *portAcc) counters() *PortCounters {
	u := func(f float64) uint64 { return uint64(math.Floor(f + 1e-9)) }
	pc := &PortCounters{TxBytes: u(a.txB), RxBytes: u(a.rxB), TxPkts: u(a.txP), RxPkts: u(a.rxP), Drops: u(a.drops), ECNMarked: u(a.ecn),
		CNPSent: u(a.cnpSent), CNPHandled: u(a.cnpHandled), OutOfSequence: u(a.ooo), Retransmits: u(a.retx),
		NAKReceived: u(a.nakRx), AckTimeouts: u(a.ackTimeouts), DuplicateRequests: u(a.dupReq),
		CNPIgnored: u(a.cnpIgnored)}
	for i := 0; i < 8; i++ {
		pc.PFCTx[i], pc.PFCRx[i], pc.PauseRxNs[i] = u(a.pfcTx[i]), u(a.pfcRx[i]), u(a.pauseRxNs[i])
		pc.PauseTxNs[i], pc.ECNReceived[i] = u(a.pauseTxNs[i]), u(a.ecnRx[i])
		pc.RxPrioBytes[i], pc.RxPrioPkts[i] = u(a.rxPrioB[i]), u(a.rxPrioP[i])
		q := a.q[i]
		pc.Queues[i] = QueueCounters{DepthBytes: u(q.depth), WatermarkBytes: u(q.wm), TxBytes: u(q.txB), TxPkts: u(q.txP), Drops: u(q.drops), ECNMarked: u(q.ecn),
			ClearedTxPkts: u(q.clearedTxP)}
	}
	return pc
}
