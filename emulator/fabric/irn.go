package fabric

import (
	"math"

	"github.com/labctl/labctl/inventory"
)

// IRN-style transport (selective repeat): the receiver keeps out-of-order
// packets and answers each with a NACK carrying its cumulative PSN and the
// PSN that arrived (a SACK); the sender then retransmits only the holes
// below the highest SACKed PSN, ahead of new data, and keeps at most one
// bandwidth-delay product of packets in flight. A timeout resends only the
// oldest unacknowledged packet.

type irnState struct {
	recv          []bool // receiver: PSNs held
	sacked        []bool // sender: PSNs SACKed above the cumulative ACK
	highestSacked int64  // one past the highest SACKed PSN
	retxNext      int64  // next hole to consider
	inRecovery    bool
	recoveryPoint int64
	cap           int64 // in-flight packets allowed (one BDP)
}

func (e *PacketEngine) setupIRN(q *qp) {
	rtt := 0.0
	for _, li := range q.path {
		rtt += 2 * float64(e.topo.links[li].delay)
	}
	pktNs := float64(e.cfg.MTU+e.cfg.HeaderBytes) * 8 / q.line
	rtt += float64(len(q.path)+1) * pktNs // serialisation at each hop and the ACK
	bdp := math.Ceil(q.line * rtt / 8 / float64(e.cfg.MTU))
	q.irn = &irnState{recv: make([]bool, q.npkts), sacked: make([]bool, q.npkts), cap: max(int64(bdp), 2)}
}

// nextPSN is what the sender would send now: a hole to repair, new data, or
// nothing (all sent; or, with IRN, a full window).
func (e *PacketEngine) nextPSN(q *qp) (int64, bool) {
	r := q.irn
	if r == nil {
		return q.sndNxt, q.sndNxt < q.npkts
	}
	if r.inRecovery {
		for r.retxNext = max(r.retxNext, q.sndUna); r.retxNext < r.highestSacked; r.retxNext++ {
			if !r.sacked[r.retxNext] {
				return r.retxNext, true
			}
		}
	}
	if q.sndNxt < q.npkts && q.sndNxt-q.sndUna < r.cap {
		return q.sndNxt, true
	}
	return 0, false
}

func (e *PacketEngine) irnReceive(q *qp, kind pktKind, psn, sack int64, ecn bool, prio uint8) {
	r := q.irn
	switch kind {
	case pktData:
		if psn < q.expected || r.recv[psn] {
			q.dstAcc.dupReq++
			e.control(q, pktAck, q.expected)
			return
		}
		r.recv[psn] = true
		e.notify(q, psn, ecn, prio)
		if psn != q.expected {
			q.dstAcc.ooo++
			p := e.pool.get()
			p.kind, p.qp, p.psn, p.sack, p.prio, p.inLink, p.wire = pktNack, q.idx, q.expected, psn, ctrlPrio, -1, inventory.DefaultAckBytes
			li := q.rpath[0]
			e.links[li].push(ctrlPrio, p)
			e.kick(li)
			return
		}
		for q.expected < q.npkts && r.recv[q.expected] {
			q.expected++
		}
		if q.expected == q.npkts || q.expected%int64(e.cfg.AckEvery) == 0 {
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
		if kind == pktNack && sack < q.npkts && !r.sacked[sack] {
			r.sacked[sack] = true
			r.highestSacked = max(r.highestSacked, sack+1)
			if !r.inRecovery {
				r.inRecovery, r.recoveryPoint, r.retxNext = true, q.sndNxt, q.sndUna
			}
		}
		if r.inRecovery && q.sndUna >= r.recoveryPoint {
			r.inRecovery = false
		}
		if q.sndUna >= q.npkts {
			e.finish(q)
			return
		}
		if e.now >= q.nextSend {
			e.trySend(q)
		}
	}
}

// irnTimeout resends the oldest unacknowledged packet only.
func (e *PacketEngine) irnTimeout(q *qp) {
	r := q.irn
	r.inRecovery, r.recoveryPoint, r.retxNext = true, q.sndNxt, q.sndUna
	r.highestSacked = max(r.highestSacked, q.sndUna+1)
	r.sacked[q.sndUna] = false
	q.nextSend = e.now
	e.armRTO(q)
	e.trySend(q)
}
