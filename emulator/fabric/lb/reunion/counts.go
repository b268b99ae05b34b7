package reunion

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting: flows marked elephant, every move of a
// flow (by a notification, Algorithm 2, or at a gap longer than the FTV)
// and of them the flowlet fallback's, and notifications sent.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	s := &m.stats
	return append(dst,
		lb.Count{Name: lb.CountElephants, Value: uint64(s.Elephants)},
		lb.Count{Name: lb.CountReroutes, Value: uint64(s.Reroutes + s.Flowlets)},
		lb.Count{Name: lb.CountFlowletMoves, Value: uint64(s.Flowlets)},
		lb.Count{Name: lb.CountNotifications, Value: uint64(s.Notifies)})
}

// pathElephants count, per directed link toward a switch, the distinct
// elephants that left by it in each interval s (the fabric's clock / s:
// every switch agrees): the switch a link leaves counts an elephant on it
// at the elephant's first packet by it in the interval (the source ToR
// and every switch after it but the destination ToR, in Arrive; a flow
// that moves off a link and back within an interval counts twice). From
// those, per link: the most elephants in one interval (max) and their sum
// over the intervals (elephant-intervals). Arrays indexed by link, made
// once, and a row per flow at each switch; nothing per packet.
type pathElephants struct {
	epoch     []int64 // interval+1 that cur counts
	cur, max  []int32
	intervals []int64
	used      []bool // reported since the module was made (kept over runs)
}

// alloc makes the arrays for nLinks links.
func (c *pathElephants) alloc(nLinks int) {
	if c.epoch == nil {
		c.epoch, c.cur, c.max = make([]int64, nLinks), make([]int32, nLinks), make([]int32, nLinks)
		c.intervals, c.used = make([]int64, nLinks), make([]bool, nLinks)
	}
}

// watch reports sw's links toward other switches from now on, at 0 until
// an elephant takes them: a report then has each link's count from the
// run's start, not from the first elephant on it.
func (c *pathElephants) watch(sw lb.Switch) {
	c.alloc(sw.NumLinks())
	for _, e := range sw.Ports() {
		if _, to := sw.LinkEnds(e.Link); to >= 0 {
			c.used[e.Link] = true
		}
	}
}

// add counts one more elephant on link in interval ep.
func (c *pathElephants) add(nLinks int, link int32, ep int64) {
	c.alloc(nLinks)
	if c.epoch[link] != ep+1 {
		c.epoch[link], c.cur[link] = ep+1, 0
	}
	c.cur[link]++
	c.max[link] = max(c.max[link], c.cur[link])
	c.intervals[link]++
	c.used[link] = true
}

// egFlow is an elephant's row at a switch it leaves: its last egress
// link there, and the interval+1 it was counted on it.
type egFlow struct {
	ep   int64
	link int32
}

// countPath counts elephant flow on link out of sw, once per interval.
func (m *Module) countPath(sw lb.Switch, flow, link int32) {
	ep := sw.Now() / m.intervalNs
	r := m.sw(sw).eg.Get(flow)
	if r.ep != ep+1 || r.link != link {
		r.ep, r.link = ep+1, link
		m.paths.add(sw.NumLinks(), link, ep)
	}
}

// reset starts a run: every count at 0, the links reported kept.
func (c *pathElephants) reset() {
	clear(c.epoch)
	clear(c.cur)
	clear(c.max)
	clear(c.intervals)
}

// LinkCounts implements lb.LinkCounting: per link toward a switch of the
// switches the module is set on (since Install), its most elephants in
// one interval and its elephant-intervals in the current run.
func (m *Module) LinkCounts(dst []lb.LinkCount) []lb.LinkCount {
	c := &m.paths
	for l, u := range c.used {
		if u {
			dst = append(dst,
				lb.LinkCount{Link: int32(l), Count: lb.Count{Name: lb.CountElephantsMax, Value: uint64(c.max[l])}},
				lb.LinkCount{Link: int32(l), Count: lb.Count{Name: lb.CountElephantIntervals, Value: uint64(c.intervals[l])}})
		}
	}
	return dst
}

// Install implements lb.Installer: the switch's links toward switches are
// reported (at 0) from the start, so the engine's first sample, before
// any run, already has them; a report's point then has a sample of each
// before its window (docs/reports.md, "Elephants per path").
func (m *Module) Install(sw lb.Switch) { m.paths.watch(sw) }
