package selb

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Module is SELB on every switch it is given (tables keyed by
// Switch.ID): the source ToR's logic in Select, Tick and Receive, the
// destination ToR's in Arrive.
type Module struct {
	k          int
	periodNs   int64
	theta      float64 // bytes per us
	inactiveNs int64
	ctrlBytes  int

	rng   lb.Rand
	sws   []swState
	dest  *reorder.Dest
	ctl   lb.Header // the CLEAR's header, reused: Send copies it
	stats Stats
}

// Stats count what the module did over its life.
type Stats struct {
	Samples    int64 // periods a source ToR sampled its uplinks and clustered them
	Congested  int64 // uplink-periods whose queue grew faster than θ
	Reroutes   int64 // flows moved off a congested path (a TAIL sent), both kinds below
	InCluster  int64 // ... to a non-congested path of the same cluster
	ToShortest int64 // ... to the shortest queue (every path of the cluster congested)
	Stays      int64 // packets on a congested path with nowhere shorter to go
	Fresh      int64 // new or idle flows placed off a congested hash path (no reordering)
	Clears     int64 // CLEARs back at the source: the reroute is over
	CtrlPkts   int64 // control packets sent (CLEARs)
	CtrlBytes  int64 // their bytes on the wire
}

// Stats are the source ToRs' counters so far, and the destination ToRs'.
func (m *Module) Stats() (Stats, reorder.Stats) { return m.stats, m.dest.Stats() }

// prios are the engine's traffic classes (lb.Packet.Priority 0-7): an
// uplink's queue length is the sum over them.
const prios = 8

// tickSample is the sampling timer's argument; reorder.Dest takes the
// non-negative ones.
const tickSample = -1

// swState is one switch's source-ToR tables.
type swState struct {
	up        []int32 // the uplinks (egress links to a higher tier)
	upOf      []int16 // by link: index in up, -1 for other links
	q, prev   []int64 // by uplink: queue bytes at the last sample and the one before
	congested []bool  // by uplink: grew faster than θ over the last period
	assign    []int8  // by uplink: its cluster
	cent      []float64
	rows      [][]int16 // by destination ToR: path ID -> uplink index (nil: not a leaf-spine-like path set)
	tx        reorder.FlowTable[txFlow]
}

// txFlow is a flow's state at its source ToR.
type txFlow struct {
	used   bool
	phase1 bool  // rerouted: packets go REROUTED until the CLEAR
	epoch  int64 // from 1; one reroute at most per epoch
	path   int32
	active int64 // last packet, ns
	tailAt int64 // the epoch's tail left, ns (0: no tail)
}

func (m *Module) sw(sw lb.Switch) *swState {
	for len(m.sws) <= sw.ID() {
		m.sws = append(m.sws, swState{})
	}
	s := &m.sws[sw.ID()]
	if s.upOf == nil {
		s.init(sw, m.k)
	}
	return s
}

func (s *swState) init(sw lb.Switch, k int) {
	s.upOf = make([]int16, sw.NumLinks())
	for i := range s.upOf {
		s.upOf[i] = -1
	}
	for _, e := range sw.Ports() {
		if _, to := sw.LinkEnds(e.Link); to >= 0 && sw.SwitchTier(to) > sw.Tier() {
			s.upOf[e.Link] = int16(len(s.up))
			s.up = append(s.up, e.Link)
		}
	}
	n := len(s.up)
	s.q, s.prev, s.congested, s.assign = make([]int64, n), make([]int64, n), make([]bool, n), make([]int8, n)
	s.cent = make([]float64, k)
}

// row maps the paths to dst to the uplinks they leave by (nil if one
// does not leave by an uplink: SELB then leaves the flow to ECMP).
func (s *swState) row(sw lb.Switch, dst int) []int16 {
	for len(s.rows) <= dst {
		s.rows = append(s.rows, nil)
	}
	if s.rows[dst] == nil {
		n := sw.Paths(sw.ID(), dst)
		r := make([]int16, n)
		for id := range r {
			r[id] = s.upOf[sw.Path(sw.ID(), dst, id)[0].Link]
			if r[id] < 0 {
				r = r[:0]
				break
			}
		}
		s.rows[dst] = r
	}
	return s.rows[dst]
}

// sample is the periodic step at a source ToR: queue lengths, growth
// against θ, and the paths' clusters.
func (m *Module) sample(sw lb.Switch, s *swState) {
	for i, l := range s.up {
		var b int64
		for pr := 0; pr < prios; pr++ {
			b += sw.QueueBytes(l, pr)
		}
		s.prev[i], s.q[i] = s.q[i], b
		s.congested[i] = growing(s.prev[i], b, m.periodNs, m.theta)
		if s.congested[i] {
			m.stats.Congested++
		}
	}
	kmeans(s.q, m.k, s.assign, s.cent, &m.rng, sw.Salt())
	m.stats.Samples++
}

// growing: a queue that went from prev to now bytes over periodNs grew
// faster than theta bytes per us.
func growing(prev, now, periodNs int64, theta float64) bool {
	return float64(now-prev)*1000/float64(periodNs) > theta
}

// Select runs at every switch with a choice: at the source ToR a data
// packet gets its flow's path pinned and the reordering fields; the rest
// (ACKs, CNPs, later hops of unpinned packets) goes by ECMP.
func (m *Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind != lb.Data || p.Role != lb.SrcToR || p.Flow < 0 || sw.Paths(sw.ID(), p.DstToR) < 2 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	s := m.sw(sw)
	row := s.row(sw, p.DstToR)
	if len(row) < 2 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	f := s.tx.Get(p.Flow)
	now := sw.Now()
	path, tail := f.path, false
	switch {
	case !f.used || now-f.active > m.inactiveNs:
		// nothing of the flow is in flight: place it without reordering
		f.used, f.phase1, f.tailAt = true, false, 0
		f.epoch++
		f.path = int32(lb.ECMP(p.Hash, sw.Salt(), len(row)))
		if s.congested[row[f.path]] {
			if id, how := choose(row, f.path, s.assign, s.congested, s.q, &m.rng, sw.Salt()); how != stay {
				f.path = id
				m.stats.Fresh++
			}
		}
		path = f.path
	case s.congested[row[f.path]] && !f.phase1:
		id, how := choose(row, f.path, s.assign, s.congested, s.q, &m.rng, sw.Salt())
		switch how {
		case stay:
			m.stats.Stays++
		default:
			tail, f.phase1, f.tailAt, f.path = true, true, now, id // this packet: the old path's tail
			m.stats.Reroutes++
			if how == inCluster {
				m.stats.InCluster++
			} else {
				m.stats.ToShortest++
			}
		}
	}
	f.active = now
	sw.Pin(p, int(path))
	reorder.Stamp(p.Hdr, f.epoch, tail, f.phase1 && !tail, now, f.tailAt)
	return 0
}

// outcome is how choose chose.
type outcome uint8

const (
	stay      outcome = iota // nothing better: the flow stays
	inCluster                // a non-congested path of the same cluster
	shortest                 // the shortest queue (the backup cluster)
)

// choose is SELB's rerouting rule for a flow on path cur (row: path ID ->
// uplink index; assign, congested, q: by uplink): a random non-congested
// path of cur's cluster on another uplink; if there is none, a random one
// of the paths with the shortest queue, if shorter than cur's; else stay.
func choose(row []int16, cur int32, assign []int8, congested []bool, q []int64, rng *lb.Rand, salt uint64) (int32, outcome) {
	cu := row[cur]
	ok := func(u int16) bool { return u != cu && assign[u] == assign[cu] && !congested[u] }
	if id, found := pick(row, ok, rng, salt); found {
		return id, inCluster
	}
	best := int64(math.MaxInt64)
	for _, u := range row {
		if u != cu {
			best = min(best, q[u])
		}
	}
	if best >= q[cu] {
		return cur, stay
	}
	id, _ := pick(row, func(u int16) bool { return u != cu && q[u] == best }, rng, salt)
	return id, shortest
}

// pick is a path drawn uniformly among those whose uplink passes ok.
func pick(row []int16, ok func(int16) bool, rng *lb.Rand, salt uint64) (int32, bool) {
	n := 0
	for _, u := range row {
		if ok(u) {
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	r := int(rng.Next(salt) % uint64(n))
	for id, u := range row {
		if ok(u) {
			if r == 0 {
				return int32(id), true
			}
			r--
		}
	}
	return 0, false
}

// Receive takes CLEARs at the source ToR: the destination has seen the
// epoch's tail, so the next packet starts a new epoch and the flow may be
// rerouted again.
func (m *Module) Receive(sw lb.Switch, p *lb.Packet) {
	h := p.Hdr
	if h.Flags&(lb.FlagReply|lb.FlagTail) != lb.FlagReply|lb.FlagTail {
		return
	}
	f := m.sw(sw).tx.Get(int32(h.Words[0]))
	if reorder.Epoch(h) != f.epoch || !f.phase1 {
		return
	}
	f.phase1, f.tailAt = false, 0
	f.epoch++
	m.stats.Clears++
}
