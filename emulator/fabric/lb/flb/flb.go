package flb

import "github.com/labctl/labctl/emulator/fabric/lb"

// Module is FLB on one switch, or on several: its state is kept per
// switch ID.
type Module struct {
	c     config
	sws   []*swState // by switch ID, on first use
	rng   lb.Rand
	stats Stats
	cnm   lb.Header // the header of the CNM being sent (a field: no allocation)
	note  lb.Packet // the flow a CNM forwarded to its host is about
}

// Stats is what the module's switches did in the current run.
type Stats struct {
	NewFlows     int64 // flow entries made at source ToRs (new or aged-out flows)
	Reroutes     int64 // packets moved to a faster path (Algorithm 1)
	Evictions    int64 // uncongested flows moved off an isolation path
	Samples      int64 // delay samples taken at destination ToRs
	CNMs         int64 // CNMs generated (congestion and release)
	Relays       int64 // CNMs relayed by a switch on the way back
	AtSource     int64 // CNMs that reached their flow's source ToR
	Isolated     int64 // flows put in an isolation table
	Released     int64 // flows taken out on a release CNM
	TimedOut     int64 // isolation entries that timed out
	HostNotices  int64 // CNMs forwarded to sending hosts
	MaxHops      int64 // most switches a CNM crossed after the one that made it
	FirstCNMNs   int64 // when the first congestion CNM was made (-1: none)
	FirstCNMQ    int64 // the queue depth it saw, bytes
	FirstCNMK    int64 // the K it was compared with, bytes
	FirstCNMLink int32 // the egress link it was about
}

// Stats is what the module did since the run started.
func (m *Module) Stats() Stats { return m.stats }

// Reset forgets everything: a new run's clock starts at 0.
func (m *Module) Reset(lb.Switch) {
	for _, st := range m.sws {
		if st != nil {
			st.reset()
		}
	}
	m.rng = lb.NewRand(seed)
	m.stats = Stats{FirstCNMNs: -1}
}

// swState is one switch's tables.
type swState struct {
	prev    []int32      // by flow: the switch its data came from, +2 (1: a host, 0: unknown)
	flows   []flowEntry  // by flow: source ToR flow table
	toward  []*pairState // by destination ToR: this ToR as the source
	from    []*recvState // by source ToR: this ToR as the destination
	ports   []portState  // by link (this switch's egress links)
	k       []int64      // by link: K, bytes; 0 until first needed
	ticking bool         // an isolation sweep is scheduled
}

func (s *swState) reset() {
	clear(s.prev)
	clear(s.flows)
	for _, t := range s.toward {
		if t != nil {
			t.reset()
		}
	}
	for _, r := range s.from {
		if r != nil {
			r.reset()
		}
	}
	for i := range s.ports {
		s.ports[i].congested, s.ports[i].flows = false, s.ports[i].flows[:0]
	}
	s.ticking = false
}

// sw is the state of switch sw, made on first use.
func (m *Module) sw(sw lb.Switch) *swState {
	if m.sws == nil {
		m.sws = make([]*swState, sw.NumSwitches())
	}
	st := m.sws[sw.ID()]
	if st == nil {
		n := sw.NumSwitches()
		st = &swState{toward: make([]*pairState, n), from: make([]*recvState, n),
			ports: make([]portState, sw.NumLinks()), k: make([]int64, sw.NumLinks())}
		m.sws[sw.ID()] = st
	}
	return st
}

// grow makes s long enough to index i; it doubles, so that flows arriving
// in index order cost no allocation per packet.
func grow[T any](s []T, i int) []T {
	if i < len(s) {
		return s
	}
	if i >= cap(s) {
		g := make([]T, len(s), max(2*cap(s), i+1, 256))
		copy(g, s)
		s = g
	}
	n := len(s)
	s = s[:i+1]
	clear(s[n:])
	return s
}

// Arrive records where each data packet came from (the CNM's way back),
// carries and takes delay feedback and samples at the ToRs, and checks
// the egress queue the packet joins against K.
func (m *Module) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	st := m.sw(sw)
	switch p.Role {
	case lb.SrcToR:
		if !m.c.stampDeparture {
			m.stamp(sw, st, p)
		}
		if r := st.from[p.DstToR]; r != nil {
			if id, q, base, ok := r.feedback(sw.Now(), m.c.delayAge); ok {
				p.Hdr.FBPath, p.Hdr.FBMetric, p.Hdr.Words[baseWord] = id, q, base
				p.Hdr.Flags |= lb.FlagFeedback
			}
		}
	case lb.DstToR:
		now := sw.Now()
		if p.Hdr.Flags&lb.FlagFeedback != 0 {
			if t := m.pair(sw, st, p.SrcToR); t != nil {
				t.learn(p.Hdr.FBPath, p.Hdr.FBMetric, p.Hdr.Words[baseWord], now)
			}
		}
		if p.Hdr.Flags&flagStamp != 0 && p.Hdr.Flags&lb.FlagPinned != 0 {
			m.recv(sw, st, p.SrcToR).sample(p.Hdr.Path, now-p.Hdr.TS, now)
			m.stats.Samples++
		}
	}
	if p.Kind != lb.Data || p.Flow < 0 {
		return lb.Normal
	}
	if p.InLink >= 0 {
		from, _ := sw.LinkEnds(p.InLink)
		st.prev = grow(st.prev, int(p.Flow))
		st.prev[p.Flow] = int32(from + 2)
	}
	m.watch(sw, st, p, out)
	return lb.Normal
}

// Dequeue releases a port whose queue fell below K, and stamps sampled
// packets leaving their source ToR (stamp_at=departure).
func (m *Module) Dequeue(sw lb.Switch, p *lb.Packet, out lb.Egress) {
	st := m.sw(sw)
	if ps := &st.ports[out.Link]; ps.congested {
		m.drained(sw, st, ps, out.Link)
	}
	if m.c.stampDeparture && p.Role == lb.SrcToR {
		m.stamp(sw, st, p)
	}
}

// stamp stamps a data packet at its source ToR if its path is due a sample.
func (m *Module) stamp(sw lb.Switch, st *swState, p *lb.Packet) {
	if p.Kind != lb.Data || p.Hdr.Flags&lb.FlagPinned == 0 {
		return
	}
	if t := st.toward[p.DstToR]; t != nil && t.due(p.Hdr.Path, sw.Now(), m.c.sampleRTTs) {
		p.Hdr.TS = sw.Now()
		p.Hdr.Flags |= flagStamp
	}
}

// Header use: TS is a sample's departure time; FBPath/FBMetric a path's
// queueing delay (ns) fed back, Words[baseWord] its base one-way delay.
const (
	flagStamp = lb.FlagUser
	baseWord  = 1
)

// A CNM's header, as the hosts' FLB+RC reads it: lb.FlagNotify, and
// FlagCongested for a congestion CNM (clear: a release); the flow's index
// in Words[WordFlow], n in Words[WordN], the switch that made it in
// Words[WordOrigin], the switches it crossed since in Words[WordHops]; TS
// when it was made.
const (
	FlagCongested = lb.FlagUser << 1

	WordFlow   = 0
	WordN      = 1
	WordOrigin = 2
	WordHops   = 3
)
