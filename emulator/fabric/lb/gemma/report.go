package gemma

import "github.com/labctl/labctl/emulator/fabric/lb"

// Period is the core's report period rule, the paper giving none: after
// each report, if some queue toward an edge moved by ChangeBytes or more
// since the previous report, the period halves, else it doubles; it stays
// within [MinNs, MaxNs]. Changing queues are thus reported every MinNs
// within a few reports, and a steady core (idle or saturated alike) falls
// back to one report per MaxNs, which keeps the reports' share of a
// downlink (ctrl_bytes per period) small when they carry no news.
type Period struct {
	MinNs, MaxNs int64
	ChangeBytes  int64
}

// Next is the period after cur, given the largest queue change seen.
func (r Period) Next(cur, change int64) int64 {
	if change >= r.ChangeBytes && change > 0 {
		return max(cur/2, r.MinNs)
	}
	return min(cur*2, r.MaxNs)
}

// A report is one control packet from a core to an edge switch; it holds
// up to perReport entries, two to a word of Header.Words: each 32 bits,
// the destination edge's switch ID (16) and the core's queue toward it in
// cells of cellBytes (16, saturating at 4 MiB), as a switch counts them.
// Header.FBMetric is the number of entries.
const (
	perReport = int32(2 * len(lb.Header{}.Words))
	cellBytes = 64
	maxCells  = 1<<16 - 1
)

// numPrios is the number of traffic classes whose queues make a port's
// egress queue length (the control class included).
const numPrios = 8

// portBytes is an egress port's queue, every traffic class.
func portBytes(sw lb.Switch, link int32) int64 {
	var b int64
	for p := 0; p < numPrios; p++ {
		b += sw.QueueBytes(link, p)
	}
	return b
}

// corePort is a core's egress port toward an edge switch.
type corePort struct {
	link int32
	edge int
	last int64 // queue at the previous report, bytes
}

// startCore finds the core's ports toward edge switches and starts its
// reports; a switch with none (an edge, a fat-tree's core) reports nothing.
func (m *Module) startCore(sw lb.Switch, s *swState) {
	if s.ports == nil {
		s.ports = []corePort{}
		for _, e := range sw.Ports() {
			if _, to := sw.LinkEnds(e.Link); to >= 0 && sw.SwitchTier(to) == lb.TierToR {
				s.ports = append(s.ports, corePort{link: e.Link, edge: to})
			}
		}
	}
	for i := range s.ports {
		s.ports[i].last = 0
	}
	if len(s.ports) > 0 {
		// cores are not in step: each starts at its own offset in the
		// first period (its hash seed), so that reports do not arrive at
		// the edges all at once
		s.period = m.period.MinNs
		sw.Schedule(s.period+int64(sw.Salt()%uint64(s.period)), tickReport)
	}
}

// report reads the core's queues toward the edges, sends each edge the
// queues toward every other edge, adapts the period and sets the next.
func (m *Module) report(sw lb.Switch, s *swState) {
	var change int64
	for i := range s.ports {
		pt := &s.ports[i]
		q := portBytes(sw, pt.link)
		change = max(change, q-pt.last, pt.last-q)
		pt.last = q
	}
	for _, to := range s.ports {
		m.ctl = lb.Header{Flags: lb.FlagFeedback}
		for _, pt := range s.ports {
			if pt.edge == to.edge {
				continue
			}
			k := m.ctl.FBMetric
			cells := min(pt.last/cellBytes, maxCells)
			m.ctl.Words[k/2] |= (int64(pt.edge)<<16 | cells) << (32 * (k % 2))
			if m.ctl.FBMetric++; m.ctl.FBMetric == perReport {
				m.sendReport(sw, to.edge)
				m.ctl = lb.Header{Flags: lb.FlagFeedback}
			}
		}
		if m.ctl.FBMetric > 0 {
			m.sendReport(sw, to.edge)
		}
	}
	s.period = m.period.Next(s.period, change)
	if m.stats.PeriodMinNs == 0 || s.period < m.stats.PeriodMinNs {
		m.stats.PeriodMinNs = s.period
	}
	m.stats.PeriodMaxNs = max(m.stats.PeriodMaxNs, s.period)
	sw.Schedule(s.period, tickReport)
}

func (m *Module) sendReport(sw lb.Switch, edge int) {
	if sw.Send(edge, m.ctrlBytes, &m.ctl) {
		m.stats.Reports++
		m.stats.CtrlBytes += int64(m.ctrlBytes)
	}
}

// entry is a downlink congestion table entry: a core's queue toward a
// destination edge, and when it was reported (0: never or cleared).
type entry struct {
	bytes, at int64
}

// takeReport writes a core's report into the edge's table.
func (m *Module) takeReport(sw lb.Switch, s *swState, core int, h *lb.Header) {
	n := sw.NumSwitches()
	now := sw.Now()
	for k := int32(0); k < h.FBMetric && k < perReport; k++ {
		v := h.Words[k/2] >> (32 * (k % 2)) & (1<<32 - 1)
		dst, cells := int(v>>16), v&maxCells
		if dst < n && core < n {
			s.l2[core*n+dst] = entry{bytes: cells * cellBytes, at: now}
			m.stats.MaxL2Bytes = max(m.stats.MaxL2Bytes, cells*cellBytes)
		}
	}
	m.stats.ReportsIn++
}

// scan clears the table's entries no report has refreshed for two of the
// longest report periods (a core's reports held up behind paused queues
// would otherwise steer by old news), and sets the next scan.
func (m *Module) scan(sw lb.Switch, s *swState) {
	now, stale := sw.Now(), 2*m.period.MaxNs
	for i := range s.l2 {
		if e := &s.l2[i]; e.at != 0 && now-e.at > stale {
			*e = entry{}
			m.stats.Expired++
		}
	}
	sw.Schedule(m.scanNs, tickScan)
}

// l2 is the table's queue of core toward dst (0 when unknown).
func (s *swState) l2Of(n, core, dst int) int64 {
	if core < 0 || s.l2 == nil {
		return 0
	}
	return s.l2[core*n+dst].bytes
}
