package reunion

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// flagElephant is the Reunion header's elephant bit.
const flagElephant = lb.FlagUser

// full is a link count no path may take: a link a notification named.
const full = math.MaxInt32 / 2

// swState is one ToR's tables: as a source (sketch, hot flows, Flow Path
// Table, Link Table, flows to reroute) and as a destination (elephants
// seen, Link Table counts, Bottleneck Link Table).
type swState struct {
	epoch   int64 // intervals ended at this switch
	sk      *sketch
	hot     hot
	tx      reorder.FlowTable[txFlow]
	links   []int32 // source Link Table: elephants per link this interval (full: named)
	reroute []int32 // flows named by notifications this interval

	eg     reorder.FlowTable[egFlow] // elephants per path: each elephant's last egress here
	rx     reorder.FlowTable[rxFlow]
	seen   []int32 // elephants seen this interval
	counts []int32 // destination Link Table, built at the interval's end
	bneck  []bneck
}

// txFlow is a flow's row in its source ToR's Flow Path Table.
type txFlow struct {
	used, elephant, pending bool
	path, dst               int32
	last                    int64 // ns: its last packet
	counted                 int64 // epoch+1 when its path was last counted in the Link Table
}

func (m *Module) sw(sw lb.Switch) *swState {
	id := sw.ID()
	for len(m.sws) <= id {
		m.sws = append(m.sws, nil)
	}
	s := m.sws[id]
	if s == nil {
		up := 0
		for _, e := range sw.Ports() {
			if _, to := sw.LinkEnds(e.Link); to >= 0 {
				up++
			}
		}
		n := m.t * max(up, 1)
		s = &swState{sk: newSketch(m.eps, m.delta), hot: hot{n: n, flow: make([]int32, 0, n), est: make([]uint32, 0, n)},
			links: make([]int32, sw.NumLinks()), counts: make([]int32, sw.NumLinks())}
		m.sws[id] = s
	}
	return s
}

// Select runs at every switch with a choice: at the source ToR a data
// packet is counted in the sketch, marked if its flow is hot and pinned
// to its flow's path; everything else goes by ECMP.
func (m *Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind != lb.Data || p.Role != lb.SrcToR || p.Flow < 0 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	me, dst := sw.ID(), p.DstToR
	n := sw.Paths(me, dst)
	if n < 2 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	s := m.sw(sw)
	now := sw.Now()
	el := s.hot.update(p.Flow, s.sk.add(p.Hash, 1))
	f := s.tx.Get(p.Flow)
	switch {
	case !f.used || int(f.path) >= n:
		f.used, f.dst, f.path = true, int32(dst), int32(lb.ECMP(p.Hash, sw.Salt(), n))
	case now-f.last > m.ftvNs: // the fallback: a new flowlet on a random path
		if id := int32(m.rng.Next(sw.Salt()) % uint64(n)); id != f.path {
			f.path = id
			m.stats.Flowlets++
		}
	}
	f.last = now
	m.stats.DataPkts++
	if el {
		p.Hdr.Flags |= flagElephant
		m.stats.ElephantPkts++
		if !f.elephant {
			f.elephant = true
			m.stats.Elephants++
		}
		if f.counted != s.epoch+1 { // Algorithm 2, 1: each elephant once per interval on its path's links
			f.counted = s.epoch + 1
			for _, h := range sw.Path(me, dst, int(f.path)) {
				s.links[h.Link]++
			}
		}
	} else {
		p.Hdr.Flags &^= flagElephant
	}
	sw.Pin(p, int(f.path))
	return 0
}

// Receive takes a notification at the source ToR: the flow's bottleneck
// and the listed highly utilised links are full until the interval ends,
// and the flow is to be rerouted then.
func (m *Module) Receive(sw lb.Switch, p *lb.Packet) {
	h := p.Hdr
	if h.Flags&lb.FlagNotify == 0 {
		return
	}
	s := m.sw(sw)
	flow := int32(h.Words[0])
	f := s.tx.Get(flow)
	if !f.used {
		return
	}
	me, dst := sw.ID(), int(f.dst)
	n := sw.Paths(me, dst)
	for id := 0; id < n; id++ {
		hops := sw.Path(me, dst, id)
		for k, e := range hops {
			if from, to := sw.LinkEnds(e.Link); from == int(h.FBPath) && to == int(h.FBMetric) || hasBit(h, id*len(hops)+k) {
				s.links[e.Link] = full
			}
		}
	}
	if !f.pending {
		f.pending = true
		s.reroute = append(s.reroute, flow)
	}
}

// rerouteAll is Algorithm 2 at the interval's end: each named flow takes
// the first path, from a random start, all of whose links carry fewer
// than t elephants, and counts there; with none it stays.
func (m *Module) rerouteAll(sw lb.Switch, s *swState) {
	me := sw.ID()
	for _, flow := range s.reroute {
		f := s.tx.Get(flow)
		f.pending = false
		dst := int(f.dst)
		n := sw.Paths(me, dst)
		start, moved := int(m.rng.Next(sw.Salt())%uint64(max(n, 1))), false
		for k := 0; k < n && !moved; k++ {
			id := (start + k) % n
			if int32(id) == f.path || !m.fits(s, sw.Path(me, dst, id)) {
				continue
			}
			for _, e := range sw.Path(me, dst, id) {
				s.links[e.Link]++
			}
			f.path, moved = int32(id), true
			m.stats.Reroutes++
		}
		if !moved {
			m.stats.NoPath++
		}
	}
	s.reroute = s.reroute[:0]
}

func (m *Module) fits(s *swState, hops []lb.Egress) bool {
	for _, e := range hops {
		if s.links[e.Link] >= int32(m.t) {
			return false
		}
	}
	return true
}

// Tick ends a ToR's interval: as a destination it notifies, as a source
// it reroutes; then its Link Table is cleared and its sketch decays.
func (m *Module) Tick(sw lb.Switch, arg int64) {
	if arg != tickInterval {
		return
	}
	s := m.sw(sw)
	m.notify(sw, s)
	m.rerouteAll(sw, s)
	clear(s.links)
	s.epoch++
	s.sk.decay(m.keep)
	s.hot.decay(m.keep)
	sw.Schedule(m.intervalNs, tickInterval)
}

// Reset forgets the switch's flows and tables (a new run's clock and flow
// indexes start again) and starts a ToR's interval timer.
func (m *Module) Reset(sw lb.Switch) {
	s := m.sw(sw)
	s.epoch = 0
	s.sk.decay(0)
	s.hot.reset()
	s.tx.Reset()
	s.rx.Reset()
	s.eg.Reset()
	clear(s.links)
	s.reroute, s.seen, s.bneck = s.reroute[:0], s.seen[:0], s.bneck[:0]
	m.ports.reset()
	m.paths.reset() // the links it watches stay (Install watched them)
	m.rng = lb.NewRand(seed)
	m.stats = Stats{}
	if sw.Tier() == lb.TierToR {
		sw.Schedule(m.intervalNs, tickInterval)
	}
}
