package conweave

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// twoToRs is a switch view for the hooks alone: ToR 0 and ToR 1 joined by
// 4 paths.
type twoToRs struct{ lbtest.FakeSwitch }

// TestHooksDoNotAllocate: once a flow's tables exist, Select at the source
// ToR, Arrive at the destination ToR (with replies, tails, NOTIFYs and
// held packets) and Receive allocate nothing.
func TestHooksDoNotAllocate(t *testing.T) {
	m := newModule(t, map[string]string{"reply_us": "1"})
	src, dst := &twoToRs{lbtest.FakeSwitch{Self: 0}}, &twoToRs{lbtest.FakeSwitch{Self: 1}}
	cands := make([]lb.Egress, 4)
	// packets in flight between the ToRs; path i takes 2+1.5i us, so a
	// rerouted packet may overtake its tail
	var air lbtest.Flight
	var ctl lb.Header
	c := lb.Packet{Kind: lb.Control, SrcToR: 1, DstToR: 0, Flow: -1, Hdr: &ctl}
	step := func() {
		src.Clock += 700
		air.Land(src.Clock, func(at int64, p *lb.Packet) {
			dst.Clock = at
			p.ECN = true
			m.Arrive(dst, p, lb.Egress{Link: 9})
			if p.Hdr.Flags&(lb.FlagRequest|lb.FlagTail) != 0 { // the answer comes back
				ctl = m.ctl
				m.Receive(src, &c)
			}
		})
		air.Launch(func(p *lb.Packet) int64 {
			m.Select(src, p, cands)
			return src.Clock + 2_000 + 1_500*int64(p.Hdr.Path)
		})
	}
	for i := 0; i < 100; i++ {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("%.2f allocations per packet", n)
	}
	if s := m.Stats(); s.Reroutes == 0 || s.Clears == 0 || s.Notifies == 0 || s.Reordering.Held == 0 || src.Pins == 0 {
		t.Errorf("the hooks did not exercise rerouting: %+v", s)
	}
}
