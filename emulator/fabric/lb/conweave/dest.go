package conweave

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Arrive runs the destination ToR's part on every data packet there:
// reordering (package reorder), then the answers the source ToR waits
// for: an RTT reply to a request, a CLEAR to a tail, and a NOTIFY naming
// the path of an ECN-marked packet.
func (m *Module) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind != lb.Data || p.Role != lb.DstToR {
		return lb.Normal
	}
	q, current := m.dest.Arrive(sw, p, out)
	if !current {
		return q
	}
	h := p.Hdr
	if m.pathAware && p.ECN && h.Flags&lb.FlagPinned != 0 {
		m.send(sw, p, lb.FlagNotify)
		m.stats.Notifies++
	}
	if h.Flags&lb.FlagRequest != 0 {
		m.send(sw, p, lb.FlagReply)
	}
	if h.Flags&lb.FlagTail != 0 {
		m.send(sw, p, lb.FlagReply|lb.FlagTail)
	}
	return q
}

// send sends a control packet about data packet p to its source ToR.
func (m *Module) send(sw lb.Switch, p *lb.Packet, flags lb.Flags) {
	m.ctl = lb.Header{Flags: flags, FBPath: p.Hdr.Path}
	m.ctl.Words[0] = int64(p.Flow)
	m.ctl.Words[reorder.EpochWord] = reorder.Epoch(p.Hdr)
	if sw.Send(p.SrcToR, m.ctrlBytes, &m.ctl) {
		m.stats.CtrlPkts++
		m.stats.CtrlBytes += int64(m.ctrlBytes) // the registry keeps it >= 64
	}
}

// Tick takes the reorder queues' timers.
func (m *Module) Tick(sw lb.Switch, arg int64) {
	if arg >= 0 {
		m.dest.Tick(sw, arg)
	}
}

// Reset forgets the switch's flows and busy paths: a new run's clock and
// flow indexes start again.
func (m *Module) Reset(sw lb.Switch) {
	s := m.sw(sw.ID())
	s.tx.Reset()
	for _, row := range s.busy {
		clear(row)
	}
	m.dest.Reset()
	m.rng = lb.NewRand(seed)
}
