package lbtest

import "github.com/labctl/labctl/emulator/fabric/lb"

// PathCounter wraps a module and counts each flow's pinned data packets in
// flight between its ToRs, per path: a packet counts from its source ToR
// to its destination ToR. Most is the most paths one flow has had packets
// on at once. The wrapped module's hooks all still run.
type PathCounter struct {
	lb.Module
	inflight map[int32]map[int32]int
	Most     int
}

// NewPathCounter wraps m.
func NewPathCounter(m lb.Module) *PathCounter {
	return &PathCounter{Module: m, inflight: map[int32]map[int32]int{}}
}

// Arrive counts p, then hands it to the wrapped module's Arrive, if any.
func (c *PathCounter) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind == lb.Data && p.Hdr.Flags&lb.FlagPinned != 0 {
		f := c.inflight[p.Flow]
		if f == nil {
			f = map[int32]int{}
			c.inflight[p.Flow] = f
		}
		switch p.Role {
		case lb.SrcToR:
			f[p.Hdr.Path]++
			n := 0
			for _, k := range f {
				if k > 0 {
					n++
				}
			}
			c.Most = max(c.Most, n)
		case lb.DstToR:
			f[p.Hdr.Path]--
		}
	}
	if a, ok := c.Module.(lb.Arriver); ok {
		return a.Arrive(sw, p, out)
	}
	return lb.Normal
}

// Receive, Tick, Reset and Dequeue pass to the wrapped module, if it
// takes them.
func (c *PathCounter) Receive(sw lb.Switch, p *lb.Packet) {
	if r, ok := c.Module.(lb.Receiver); ok {
		r.Receive(sw, p)
	}
}

func (c *PathCounter) Tick(sw lb.Switch, arg int64) {
	if t, ok := c.Module.(lb.Ticker); ok {
		t.Tick(sw, arg)
	}
}

func (c *PathCounter) Reset(sw lb.Switch) {
	if r, ok := c.Module.(lb.Resetter); ok {
		r.Reset(sw)
	}
}

func (c *PathCounter) Dequeue(sw lb.Switch, p *lb.Packet, out lb.Egress) {
	if d, ok := c.Module.(lb.Dequeuer); ok {
		d.Dequeue(sw, p, out)
	}
}
