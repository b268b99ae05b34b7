package flb

import (
	"math/bits"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// flowEntry is a source ToR's entry for one flow.
type flowEntry struct {
	last      int64 // ns: its previous packet's arrival (the aging counter's reset)
	hit       int64 // ns: last packet or CNM (isolation entries time out from it)
	path      int32
	n         int32 // congested: the n of its latest CNM
	dst       int32 // its destination ToR
	valid     bool
	congested bool // in the isolation table
}

// Select is Algorithm 1 at a data packet's source ToR; elsewhere, and for
// ACKs and control packets, it hashes as ECMP does.
func (m *Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Role != lb.SrcToR || p.Kind != lb.Data || p.Flow < 0 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	st := m.sw(sw)
	t := m.pair(sw, st, p.DstToR)
	if t == nil {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	n := len(t.q)
	st.flows = grow(st.flows, int(p.Flow))
	f := &st.flows[p.Flow]
	now := sw.Now()
	switch {
	case !f.valid || now-f.last > m.c.entryAge || int(f.path) >= n:
		if f.congested {
			m.unisolate(sw, st, t, p.Flow)
			m.stats.TimedOut++
		}
		f.path, f.valid, f.dst = m.best(sw, t, p.DstToR, int(p.Priority), n, now), true, int32(p.DstToR)
		m.stats.NewFlows++
	case f.congested: // stays on its isolation path
	case t.isolated(f.path): // isolation paths are the congested flows' alone
		f.path = m.best(sw, t, p.DstToR, int(p.Priority), n, now)
		m.stats.Evictions++
	default:
		if id := m.faster(sw, t, p.DstToR, int(p.Priority), f.path, m.gap(now, f.last), n, now); id >= 0 {
			f.path = id
			m.stats.Reroutes++
		}
	}
	f.last, f.hit = now, now
	if !sw.Pin(p, int(f.path)) {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	first := sw.Path(sw.ID(), p.DstToR, int(f.path))[0].Link
	for i := range c {
		if c[i].Link == first {
			return i
		}
	}
	return 0
}

// gap is the time since a flow's previous packet as its aging counter
// tells it: the counter is reset by each packet and counts the ticks of a
// free-running timer (8 bits), so it reads k when between k-1 and k+1
// ticks have passed; (k-1) ticks is the gap it guarantees.
func (m *Module) gap(now, last int64) int64 {
	k := min(now/m.c.tick-last/m.c.tick, 255)
	return max(k-1, 0) * m.c.tick
}

// best is the least-delay path that is not an isolation path (any path if
// all are), ties broken at random.
func (m *Module) best(sw lb.Switch, t *pairState, dst, prio, n int, now int64) int32 {
	all := bits.OnesCount64(t.iso) >= n
	best, bestQ, ties := int32(-1), int64(0), uint64(0)
	for id := 0; id < n; id++ {
		if !all && t.isolated(int32(id)) {
			continue
		}
		q := m.delay(sw, t, dst, prio, id, now)
		switch {
		case best < 0 || q < bestQ:
			best, bestQ, ties = int32(id), q, 1
		case q == bestQ:
			ties++ // reservoir sampling: each of the best equally likely
			if m.rng.Next(sw.Salt())%ties == 0 {
				best = int32(id)
			}
		}
	}
	return best
}

// faster is Algorithm 1's move for a flow on path cur whose packet comes
// gap ns after the previous one: the least-delay path p' (not isolated)
// with 0 < delay(cur) - delay(p') < gap, or -1 to stay.
func (m *Module) faster(sw lb.Switch, t *pairState, dst, prio int, cur int32, gap int64, n int, now int64) int32 {
	if gap <= 0 {
		return -1
	}
	dc := m.delay(sw, t, dst, prio, int(cur), now)
	best, bestQ := int32(-1), dc
	for id := 0; id < n; id++ {
		if t.isolated(int32(id)) {
			continue
		}
		q := m.delay(sw, t, dst, prio, id, now)
		if d := dc - q; d > 0 && d < gap && q < bestQ {
			best, bestQ = int32(id), q
		}
	}
	return best
}

// delay is path id's queueing delay toward dst as the source ToR knows
// it: what was fed back, or, with local_queue, at least what the path's
// uplink here holds now (its draining time at the link's rate), which is
// fresher than a sample that left before that queue built up.
func (m *Module) delay(sw lb.Switch, t *pairState, dst, prio, id int, now int64) int64 {
	d := t.delay(id, now, m.c.delayAge)
	if m.c.localQueue {
		up := sw.Path(sw.ID(), dst, id)[0].Link
		d = max(d, int64(float64(sw.QueueBytes(up, prio))*8/sw.LinkGbps(up)))
	}
	return d
}
