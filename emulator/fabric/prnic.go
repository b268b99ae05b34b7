package fabric

import (
	"math"

	"github.com/labctl/labctl/inventory"
)

// The packet engine's RNICs: one QP per flow. The sender segments the
// message at the MTU and paces packets at its current rate (line rate, or
// DCQCN's). The receiver accepts only the next expected PSN (go-back-N, as
// lossless RoCE): an out-of-order packet is dropped and answered with a
// NACK of the expected PSN, once, and again while out-of-order packets keep
// coming at most every NackIntervalNs; an in-order one is ACKed every
// AckEvery packets.
// A sender that hears nothing for RTONs goes back to its oldest unacked
// packet. An ECN-marked packet makes the receiver (notification point)
// send a CNP, at most one per MinTimeBetweenCNPs per QP (0, the default: one
// per marked packet); the sender (reaction point) cuts its rate on it (see
// DCQCN in config.go).

type qp struct {
	idx          int32
	flow         Flow
	path, rpath  []int32
	srcAcc       *portAcc // the sender's NIC port, for RNIC counters
	dstAcc       *portAcc
	npkts        int64
	line         float64 // bits per ns
	rate, target float64
	started      bool
	sndNxt       int64
	sndUna       int64
	nextSend     int64 // ps
	sendGen      uint32
	sendPending  bool      // a pacing event (generation sendGen) is queued
	lastWire     int32     // bytes on the wire of the last packet sent
	rto          timer     // retransmission timeout
	highest      int64     // one past the highest PSN ever sent (retransmits are below it)
	prio         uint8     // data priority (Flow.Priority; 0 means 3)
	dscp         int8      // from Flow.TOS; -1: unknown
	ect          bool      // the data packets are ECN-capable
	irn          *irnState // nil: go-back-N
	rp, np       *DCQCN    // the sender's and the receiver's DCQCN settings
	fwdKey       uint64    // 5-tuple hashes of the data and the ACK direction
	revKey       uint64
	srcIdx       int32 // host indexes of the two ends (forwarding caches)
	dstIdx       int32
	host         *hostMod // the sending host's module (phost.go); nil: none
	paused       bool     // a host module paused it
	passed       bool     // the host module held the packet in hand and lets it go
	sport        uint16   // UDP source port a host module set; 0: the QP's own
	// receiver
	expected   int64
	lastNack   int64 // the PSN last NACKed
	nackAt     int64 // ps: when lastNack may be NACKed again
	lastCNP    int64
	senderDone bool // every packet acknowledged: the flow is complete
	// DCQCN reaction point
	alpha           float64
	dcqcnStarted    bool  // the model runs from the first CNP on
	firstCNP        int64 // ps: origin of the decrease-tick grid
	alphaT          int64 // ps: start of the current alpha interval
	cnpInPeriod     bool
	decreasePending bool
	bytesCount      int64
	stage           int
	incr            timer // DCQCN rate-increase timer (RPG_TIME_RESET)
	start, end      int64 // ps
}

func (e *PacketEngine) payloadOf(q *qp, psn int64) int32 {
	mtu := int64(e.cfg.MTU)
	return int32(min(mtu, q.flow.Bytes-psn*mtu))
}

// startQP begins a flow.
func (e *PacketEngine) startQP(q *qp) {
	q.started, q.start = true, e.now
	q.rate, q.target = q.line, q.line
	q.alpha = q.rp.InitialAlpha
	q.lastNack, q.lastCNP = -1, math.MinInt64/2
	e.trySend(q)
}

// trySend puts the next packet on the NIC if it may: the pacing time has
// come and the port has nothing of this priority waiting.
func (e *PacketEngine) trySend(q *qp) {
	psn, ok := e.nextPSN(q)
	if q.senderDone || !ok || q.paused {
		return
	}
	if e.now < q.nextSend {
		e.paceAt(q)
		return
	}
	li := q.path[0]
	l := &e.links[li]
	if l.q[q.prio].n > 0 || l.paused[q.prio] {
		l.waiting = append(l.waiting, q.idx)
		return
	}
	if q.host != nil && !e.hostPass(q, psn) {
		return
	}
	p := e.pool.get()
	p.kind, p.qp, p.psn, p.prio, p.inLink, p.notECT = pktData, q.idx, psn, q.prio, -1, !q.ect
	p.sport = q.sport
	p.payload = e.payloadOf(q, psn)
	p.wire = p.payload + int32(e.cfg.HeaderBytes)
	if psn < q.highest {
		q.srcAcc.retx++
	}
	if psn == q.sndNxt {
		q.sndNxt++
	} else if q.irn != nil {
		q.irn.retxNext = psn + 1
	}
	q.highest = max(q.highest, q.sndNxt)
	l.push(q.prio, p)
	e.kick(li)
	e.armRTO(q)
	if q.rp.reacts(q.prio) && q.rate < q.line {
		e.countBytes(q, int64(p.payload))
	}
	q.lastWire = p.wire
	q.nextSend = e.now + int64(float64(p.wire)*8000/q.rate)
	if _, more := e.nextPSN(q); more {
		e.paceAt(q)
	}
}

// paceAt (re)schedules the QP's pacing event at q.nextSend; an earlier one
// still queued goes stale.
func (e *PacketEngine) paceAt(q *qp) {
	q.sendGen++
	q.sendPending = true
	e.ev.push(qpEvent(q.nextSend, evQPSend, q.idx, q.sendGen))
}

// setRate changes a QP's sending rate and re-times the pacing gap after
// the packet last sent at the new rate, as ConnectX applies a new rate to
// the interval in progress (the papers' ns-3 code moves the QP's next
// send time the same way). Without it a flow cut to a crawl just after a
// packet waits out the crawl's gap (5.5 ms at 6 Mb/s) long after its rate
// has recovered.
func (e *PacketEngine) setRate(q *qp, r float64) {
	old := q.rate
	q.rate = r
	if r == old || q.nextSend <= e.now || q.lastWire == 0 {
		return
	}
	bits := float64(q.lastWire) * 8000
	q.nextSend = max(q.nextSend+int64(bits/r)-int64(bits/old), e.now)
	if q.sendPending {
		e.paceAt(q)
	}
}

// timer is a QP timer that is re-armed far more often than it fires (the
// RTO at every packet and ACK): it keeps one event in the queue at most, and
// an event that finds the deadline moved later goes back in for it. Stale
// timer events would otherwise be most of the queue.
type timer struct {
	at      int64 // ps; noTimer when disarmed
	pending bool  // an event for this timer is in the queue
}

const noTimer = -1

// set (re)arms t for time at (ps), pushing an event only if none is queued.
func (e *PacketEngine) set(t *timer, at int64, ev event) {
	t.at = at
	if !t.pending {
		t.pending = true
		ev.t = at
		e.ev.push(ev)
	}
}

// due reports whether the timer's event ev fires now; if its deadline moved
// later, the event is queued again for it.
func (e *PacketEngine) due(t *timer, ev event) bool {
	t.pending = false
	switch {
	case t.at == noTimer:
		return false
	case e.now < t.at:
		e.set(t, t.at, ev)
		return false
	}
	t.at = noTimer
	return true
}

func (e *PacketEngine) armRTO(q *qp) {
	e.set(&q.rto, e.now+e.cfg.RTONs*1000, qpEvent(0, evRTO, q.idx, 0))
}

func (e *PacketEngine) onRTO(ev event) {
	q := e.qps[ev.id]
	if !e.due(&q.rto, ev) || q.senderDone {
		return
	}
	q.srcAcc.ackTimeouts++
	if q.irn != nil {
		e.irnTimeout(q)
		return
	}
	q.sndNxt = q.sndUna // go back to the oldest unacknowledged packet
	q.nextSend = e.now
	e.trySend(q)
}

// control sends an ACK, NACK or CNP from the receiver back to the sender.
func (e *PacketEngine) control(q *qp, kind pktKind, psn int64) {
	p := e.pool.get()
	p.kind, p.qp, p.psn, p.prio, p.inLink = kind, q.idx, psn, ctrlPrio, -1
	p.wire = inventory.DefaultAckBytes
	li := q.rpath[0]
	e.links[li].push(ctrlPrio, p)
	e.kick(li)
}

// finish completes a flow at its sender, when the last packet is
// acknowledged: its FCT runs to here, as a sender's completion does on an
// RNIC and in the papers' ns-3 code bases (so it includes the last ACK's
// way back, as inventory.IdealFCT does).
func (e *PacketEngine) finish(q *qp) {
	if q.senderDone {
		return
	}
	q.senderDone, q.end = true, e.now
	q.rto.at = noTimer // cancel the timer
	e.flowDone(q)
}

// notify is the notification point on a data packet the receiver takes:
// a CNP for an ECN-marked one, at most one per MinTimeBetweenCNPs per QP
// (0: one for every marked packet).
func (e *PacketEngine) notify(q *qp, psn int64, ecn bool, prio uint8) {
	if ecn && q.np.notifies(prio) && e.now-q.lastCNP >= q.np.MinTimeBetweenCNPsNs*1000 {
		q.lastCNP = e.now
		q.dstAcc.cnpSent++
		e.control(q, pktCNP, psn)
	}
}

// receive handles a packet at its destination host.
func (e *PacketEngine) receive(p *packet) {
	if p.kind == pktNotify {
		e.hostNotified(p)
		return
	}
	q := e.qps[p.qp]
	kind, psn, sack, ecn, prio := p.kind, p.psn, p.sack, p.ecn, p.prio
	e.pool.put(p)
	if kind == pktData && ecn {
		q.dstAcc.ecnRx[prio]++
	}
	if q.irn != nil && kind != pktCNP {
		e.irnReceive(q, kind, psn, sack, ecn, prio)
		return
	}
	switch kind {
	case pktData:
		switch {
		case psn == q.expected:
			q.expected++
			e.notify(q, psn, ecn, prio)
			if q.expected == q.npkts || q.expected%int64(e.cfg.AckEvery) == 0 {
				e.control(q, pktAck, q.expected)
			}
		case psn > q.expected:
			q.dstAcc.ooo++
			again := e.cfg.NackIntervalNs > 0 && e.now >= q.nackAt
			if q.lastNack != q.expected || again {
				q.lastNack, q.nackAt = q.expected, e.now+e.cfg.NackIntervalNs*1000
				e.control(q, pktNack, q.expected)
				if e.cfg.CNPOnNack { // loss is taken as congestion, as a mark is
					e.notify(q, psn, true, prio)
				}
			}
		default: // a duplicate: tell the sender where we are
			q.dstAcc.dupReq++
			e.control(q, pktAck, q.expected)
		}
	case pktAck, pktNack:
		if kind == pktNack {
			q.srcAcc.nakRx++
		}
		if psn > q.sndUna {
			q.sndUna = psn
			e.armRTO(q)
		}
		if q.sndUna >= q.npkts {
			e.finish(q)
			return
		}
		if kind == pktNack && psn < q.sndNxt {
			q.sndNxt = psn // go back N
			q.nextSend = e.now
			e.trySend(q)
		}
	case pktCNP:
		if !q.rp.reacts(q.prio) {
			q.srcAcc.cnpIgnored++
			return
		}
		q.srcAcc.cnpHandled++
		e.onCNP(q)
	}
}

// DCQCN reaction point, as the ns-3 RDMA code base the papers use models
// ConnectX ("Mellanox's version"): a CNP only raises flags; every
// DCE_TCP_RTT alpha moves toward 1 (a CNP came) or 0 (none came); every
// RATE_REDUCE_MONITOR_PERIOD the rate is cut once if a CNP came; increases
// run on the RPG_TIME_RESET timer (and, when RPG_BYTE_RESET > 0, every
// that many bytes): RPG_THRESHOLD fast-recovery steps toward the target,
// one additive step, then hyper steps. Without CLAMP_TGT_RATE a cut before
// any increase keeps the target, so recovery returns to the rate before a
// cascade of cuts.

// The alpha and decrease timers of that model tick every DCE_TCP_RTT and
// RATE_REDUCE_MONITOR_PERIOD from the first CNP on. They are computed on
// demand on the same time grid instead of ticking: alpha in closed form
// over the intervals elapsed, and one decrease event at the next tick only
// when a CNP is pending. Same results, far fewer events.

func (e *PacketEngine) onCNP(q *qp) {
	d := q.rp
	if !q.dcqcnStarted {
		q.dcqcnStarted, q.alpha, q.alphaT, q.firstCNP = true, 1, e.now, e.now
	} else {
		e.advanceAlpha(q)
		q.cnpInPeriod = true
	}
	if !q.decreasePending {
		q.decreasePending = true
		period := d.RateReduceMonitorNs * 1000
		next := q.firstCNP + ((e.now-q.firstCNP)/period+1)*period + 1
		e.ev.push(qpEvent(next, evDCQCN, q.idx, dcqcnDecrease))
	}
}

// advanceAlpha applies the alpha updates of the intervals completed by now.
func (e *PacketEngine) advanceAlpha(q *qp) {
	interval := q.rp.DCETCPRTTNs * 1000
	k := (e.now - q.alphaT) / interval
	if k <= 0 {
		return
	}
	g := 1 - float64(q.rp.DCETCPG)/1024
	q.alphaT += k * interval
	if q.cnpInPeriod {
		q.alpha = (1-g)*q.alpha + g
		q.cnpInPeriod = false
		k--
	}
	q.alpha *= math.Pow(1-g, float64(k))
}

// DCQCN timer kinds (carried in event.arg).
const (
	dcqcnDecrease uint32 = iota
	dcqcnIncrease
)

func (e *PacketEngine) onDCQCN(ev event) {
	q := e.qps[ev.id]
	d := q.rp
	if q.senderDone {
		return
	}
	switch ev.arg {
	case dcqcnDecrease:
		q.decreasePending = false
		e.advanceAlpha(q)
		if d.ClampTargetRate || q.stage != 0 {
			q.target = q.rate
		}
		e.setRate(q, math.Max(q.rate*math.Max(1-q.alpha/2, d.RPGMinDecFac/100), d.RPGMinRateGbps))
		q.stage, q.bytesCount = 0, 0
		e.set(&q.incr, e.now+d.RPGTimeResetNs*1000, qpEvent(0, evDCQCN, q.idx, dcqcnIncrease))
	case dcqcnIncrease:
		if !e.due(&q.incr, ev) {
			return
		}
		e.set(&q.incr, e.now+d.RPGTimeResetNs*1000, ev)
		e.increase(q)
	}
}

func (e *PacketEngine) countBytes(q *qp, n int64) {
	if q.rp.RPGByteReset <= 0 {
		return
	}
	q.bytesCount += n
	if q.bytesCount >= q.rp.RPGByteReset {
		q.bytesCount -= q.rp.RPGByteReset
		e.increase(q)
	}
}

// increase is one rate-increase event: fast recovery while stage <
// RPG_THRESHOLD, one additive step at it, hyper steps beyond.
func (e *PacketEngine) increase(q *qp) {
	d := q.rp
	switch {
	case q.stage < d.RPGThreshold:
	case q.stage == d.RPGThreshold:
		q.target += d.RPGAIRateGbps
	default:
		q.target += d.RPGHAIRateGbps
	}
	q.stage++
	q.target = math.Min(q.target, q.line)
	e.setRate(q, math.Min((q.rate+q.target)/2, q.line))
}
