package selb

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Arrive runs the destination ToR's part on every data packet there:
// reordering as ConWeave's destination does (package reorder), and a
// CLEAR to the source ToR when a rerouted flow's tail arrives.
func (m *Module) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Role != lb.DstToR {
		return lb.Normal
	}
	q, current := m.dest.Arrive(sw, p, out) // lb.Normal, false for all but data
	if current && p.Hdr.Flags&lb.FlagTail != 0 {
		m.clear(sw, int64(p.Flow), reorder.Epoch(p.Hdr), p.SrcToR)
	}
	return q
}

// clear tells the source ToR that flow's tail of epoch has arrived.
func (m *Module) clear(sw lb.Switch, flow, epoch int64, src int) {
	m.ctl = lb.Header{Flags: lb.FlagReply | lb.FlagTail}
	m.ctl.Words[0], m.ctl.Words[reorder.EpochWord] = flow, epoch
	if sw.Send(src, m.ctrlBytes, &m.ctl) {
		m.stats.CtrlPkts++
		m.stats.CtrlBytes += int64(m.ctrlBytes)
	}
}

// Tick takes the sampling timer and the reorder queues' timers.
func (m *Module) Tick(sw lb.Switch, arg int64) {
	if arg >= 0 {
		m.dest.Tick(sw, arg)
		return
	}
	m.sample(sw, m.sw(sw))
	sw.Schedule(m.periodNs, tickSample)
}

// Reset forgets the switch's flows and samples (a new run's clock and
// flow indexes start again) and starts a ToR's sampling timer.
func (m *Module) Reset(sw lb.Switch) {
	s := m.sw(sw)
	s.tx.Reset()
	clear(s.q)
	clear(s.prev)
	clear(s.congested)
	clear(s.assign)
	m.dest.Reset()
	m.rng = lb.NewRand(seed)
	if sw.Tier() == lb.TierToR && len(s.up) > 1 {
		sw.Schedule(m.periodNs, tickSample)
	}
}
