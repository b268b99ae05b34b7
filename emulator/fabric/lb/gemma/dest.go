package gemma

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Arrive runs the destination edge's part on every data packet there:
// reordering (package reorder), and a CLEAR to the source edge when a
// reroute's tail passes, so that the flow may be rerouted again.
func (m *Module) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind != lb.Data || p.Role != lb.DstToR {
		return lb.Normal
	}
	q, current := m.dest.Arrive(sw, p, out)
	if current && p.Hdr.Flags&lb.FlagTail != 0 {
		m.ctl = lb.Header{Flags: lb.FlagReply | lb.FlagTail}
		m.ctl.Words[0] = int64(p.Flow)
		m.ctl.Words[reorder.EpochWord] = reorder.Epoch(p.Hdr)
		if sw.Send(p.SrcToR, m.ctrlBytes, &m.ctl) {
			m.stats.CtrlPkts++
			m.stats.CtrlBytes += int64(m.ctrlBytes)
		}
	}
	return q
}

// Tick takes the reorder queues' timers, the cores' reports and the
// edges' scans.
func (m *Module) Tick(sw lb.Switch, arg int64) {
	switch {
	case arg >= 0:
		m.dest.Tick(sw, arg)
	case arg == tickReport:
		m.report(sw, m.sw(sw.ID()))
	case arg == tickScan:
		m.scan(sw, m.sw(sw.ID()))
	}
}

// Reset forgets the switch's flows and table and starts its timers: a
// core's reports, an edge's scans.
func (m *Module) Reset(sw lb.Switch) {
	s := m.sw(sw.ID())
	s.tx.Reset()
	m.dest.Reset()
	m.rng = lb.NewRand(seed)
	if sw.Tier() == lb.TierToR {
		if n := sw.NumSwitches(); len(s.l2) != n*n {
			s.l2 = make([]entry, n*n)
		}
		clear(s.l2)
		sw.Schedule(m.scanNs, tickScan)
		return
	}
	m.startCore(sw, s)
}
