package gemma

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Module is Gemma on every switch it is given (tables keyed by
// Switch.ID): the core's reports (report.go), the source edge's choice in
// Select, the destination edge's reordering in Arrive (dest.go).
type Module struct {
	score     Scorer
	period    Period
	scanNs    int64
	clearNs   int64
	ctrlBytes int

	rng   lb.Rand
	sws   []swState
	dest  *reorder.Dest
	ctl   lb.Header // a control packet's header, reused: Send copies it
	stats Stats
}

// Stats count what the module did over its life.
type Stats struct {
	NewFlows      int64 // flows put on a random path
	Smooth        int64 // packets whose flow's path was smooth: they stay
	Congested     int64 // packets whose flow's path was congested
	NoCandidate   int64 // ... with an empty candidate set: they stay
	Reroutes      int64 // ... moved to the lowest-scoring candidate
	InReroute     int64 // packets sent while their flow's reroute was not cleared (no decision)
	Clears        int64 // CLEARs taken: the destination saw a reroute's tail
	ClearTimeouts int64 // reroutes taken as over after clear_timeout_us without a CLEAR
	Reports       int64 // queue reports sent by cores
	ReportsIn     int64 // queue reports taken by edges
	Expired       int64 // table entries cleared by the scan (stale)
	MaxL2Bytes    int64 // the longest core queue an edge's table took
	PeriodMinNs   int64 // shortest report period a core set
	PeriodMaxNs   int64 // longest
	CtrlPkts      int64 // CLEARs sent
	CtrlBytes     int64 // bytes on the wire of reports and CLEARs
	Reordering    reorder.Stats
}

// Stats are the counters so far.
func (m *Module) Stats() Stats {
	s := m.stats
	s.Reordering = m.dest.Stats()
	return s
}

// Timer arguments of Tick; non-negative ones are the reorder package's.
const (
	tickReport = -1 // a core's next report
	tickScan   = -2 // an edge's next table scan
)

// swState is one switch's tables: as a source edge, its flows and the
// downlink congestion table; as a core, its ports toward the edges.
type swState struct {
	tx     reorder.FlowTable[txFlow]
	l2     []entry // by core*NumSwitches + destination edge
	scores []float64
	cands  []int
	ports  []corePort
	period int64
}

// txFlow is a flow's state at its source edge.
type txFlow struct {
	used    bool
	phase1  bool  // a reroute is in progress: packets go REROUTED until the CLEAR
	cleared bool  // its CLEAR came
	epoch   int64 // from 1; one per reroute (package reorder)
	path    int32
	tailAt  int64 // the reroute's tail left, ns
}

func (m *Module) sw(id int) *swState {
	for len(m.sws) <= id {
		m.sws = append(m.sws, swState{})
	}
	return &m.sws[id]
}

// Select runs at every switch with a choice: at the source edge a data
// packet gets its flow's path pinned and reordering fields stamped;
// everything else (ACKs, CNPs, control packets, later hops) goes by ECMP.
func (m *Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind != lb.Data || p.Role != lb.SrcToR || p.Flow < 0 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	id, dst := sw.ID(), p.DstToR
	n := sw.Paths(id, dst)
	if n < 2 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	s := m.sw(id)
	f := s.tx.Get(p.Flow)
	now := sw.Now()
	if !f.used {
		*f = txFlow{used: true, epoch: 1, path: int32(m.rng.Next(sw.Salt()) % uint64(n))}
		m.stats.NewFlows++
		return m.send(sw, p, f, false, false)
	}
	if f.phase1 {
		if !f.cleared && now-f.tailAt <= m.clearNs {
			m.stats.InReroute++
			return m.send(sw, p, f, false, true)
		}
		if !f.cleared {
			m.stats.ClearTimeouts++
		}
		f.epoch++
		f.phase1, f.cleared = false, false
	}
	best := m.decide(sw, s, dst, n, int(f.path))
	if best < 0 {
		return m.send(sw, p, f, false, false)
	}
	// This packet is the old path's TAIL; the flow's next ones take the
	// new path, REROUTED, until the destination clears the reroute.
	f.phase1, f.tailAt = true, now
	r := m.send(sw, p, f, true, false)
	f.path = int32(best)
	m.stats.Reroutes++
	return r
}

// decide is Gemma's per-packet rule for a flow on path cur: the path to
// move it to, or -1 to stay (smooth, or no candidate).
func (m *Module) decide(sw lb.Switch, s *swState, dst, n, cur int) int {
	own := m.pathScore(sw, s, dst, cur)
	if !m.score.Congested(own) {
		m.stats.Smooth++
		return -1
	}
	m.stats.Congested++
	if cap(s.scores) < n {
		s.scores, s.cands = make([]float64, n), make([]int, 0, n)
	}
	scores := s.scores[:n]
	for i := range scores {
		if i == cur {
			scores[i] = own // scored above, at the same instant
			continue
		}
		scores[i] = m.pathScore(sw, s, dst, i)
	}
	s.cands = m.score.Candidates(scores, cur, int(m.rng.Next(sw.Salt())%uint64(n)), s.cands[:0])
	best := Lowest(scores, s.cands)
	if best < 0 {
		m.stats.NoCandidate++
	}
	return best
}

// pathScore is the score of path id from this edge to dst: L1 is the
// local uplink's queue, L2 the table's queue of the uplink's far end (the
// core) toward dst.
func (m *Module) pathScore(sw lb.Switch, s *swState, dst, id int) float64 {
	links := sw.Path(sw.ID(), dst, id)
	up := links[0].Link
	_, core := sw.LinkEnds(up)
	return m.score.Score(portBytes(sw, up), s.l2Of(sw.NumSwitches(), core, dst))
}

// send pins p to its flow's path and stamps its reordering fields.
func (m *Module) send(sw lb.Switch, p *lb.Packet, f *txFlow, tail, rerouted bool) int {
	sw.Pin(p, int(f.path))
	tailAt := int64(0)
	if tail || rerouted {
		tailAt = f.tailAt
	}
	reorder.Stamp(p.Hdr, f.epoch, tail, rerouted, sw.Now(), tailAt)
	return 0
}

// Receive takes the cores' reports and the destinations' CLEARs at an
// edge switch.
func (m *Module) Receive(sw lb.Switch, p *lb.Packet) {
	h := p.Hdr
	s := m.sw(sw.ID())
	switch {
	case h.Flags&lb.FlagFeedback != 0:
		m.takeReport(sw, s, p.SrcToR, h)
	case h.Flags&lb.FlagTail != 0:
		f := s.tx.Get(int32(h.Words[0]))
		if f.phase1 && reorder.Epoch(h) == f.epoch {
			f.cleared = true
			m.stats.Clears++
		}
	}
}
