package gemma

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// twoEdges is a switch view for the hooks alone: edges 0 and 1 joined by
// 4 paths, path i through core 2+i (uplink link i, downlink link 4+i).
type twoEdges struct{ lbtest.FakeSwitch }

func (s *twoEdges) NumSwitches() int            { return 6 }
func (s *twoEdges) LinkEnds(l int32) (int, int) { return s.Self, 2 + int(l)%4 }

// TestHooksDoNotAllocate: once a flow's tables exist, Select at the
// source edge (scoring every path, rerouting), Arrive at the destination
// edge (held packets, tails, CLEARs), Receive of CLEARs and of a core's
// report, and the core's report and the edge's scan allocate nothing.
func TestHooksDoNotAllocate(t *testing.T) {
	m := newModule(t, nil)
	var queue [8]int64
	paths := make([][]lb.Egress, 4)
	for i := range paths {
		paths[i] = []lb.Egress{{Link: int32(i)}, {Link: int32(4 + i)}}
	}
	src := &twoEdges{lbtest.FakeSwitch{Self: 0, Depth: queue[:], Routes: paths}} // one depth for all links
	dst := &twoEdges{lbtest.FakeSwitch{Self: 1, Depth: queue[:], Routes: paths}}
	core := &star{edges: 2, queue: make([]int64, 2)} // shares switch 0's tables with src: its own fields
	m.Reset(core)
	m.Reset(src)
	m.Reset(dst)
	var air lbtest.Flight // from the source edge to the destination edge
	var ctl lb.Header
	c := lb.Packet{Kind: lb.Control, SrcToR: 1, DstToR: 0, Flow: -1, Hdr: &ctl}
	rep := lb.Packet{Kind: lb.Control, SrcToR: 2, DstToR: 0, Flow: -1, Hdr: &ctl}
	step := func() {
		src.Clock += 700
		air.Land(src.Clock, func(at int64, p *lb.Packet) {
			dst.Clock = at
			m.Arrive(dst, p, lb.Egress{Link: 9})
			if p.Hdr.Flags&lb.FlagTail != 0 { // the CLEAR comes back
				ctl = m.ctl
				m.Receive(src, &c)
			}
		})
		air.Launch(func(p *lb.Packet) int64 {
			m.Select(src, p, nil)
			queue = [8]int64{}
			queue[m.sws[0].tx.Get(3).path] = 200_000 // the flow's uplink is always congested
			return src.Clock + 2_000 + 1_500*int64(p.Hdr.Path)
		})
		core.now, core.queue[0] = src.Clock, src.Clock%100_000
		m.Tick(core, tickReport)
		ctl = core.sent[len(core.sent)-1].h
		core.sent = core.sent[:0]
		m.Receive(src, &rep)
		m.Tick(src, tickScan)
	}
	for i := 0; i < 100; i++ {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("%.2f allocations per packet", n)
	}
	if s := m.Stats(); s.Reroutes == 0 || s.Clears == 0 || s.Reordering.Held == 0 || s.MaxL2Bytes == 0 {
		t.Errorf("the hooks did not exercise rerouting: %+v", s)
	}
}

// TestNoAllocationPerPacket: the congested-downlink run with its flows 8
// and 16 times as long (the second has over 40000 more packets, rerouting
// all along) allocates about the same: Gemma's tables grow per flow and
// per switch, not per packet. What does grow with a run's length is the
// engine's event-queue buckets (8 events each; one that holds more at
// once grows, once): Gemma's timers and control packets make such bursts,
// so its count rises from the 1x to the 8x run (ECMP's does not) and then
// levels off. TestHooksDoNotAllocate pins Gemma's own share at zero.
func TestNoAllocationPerPacket(t *testing.T) {
	topo, _, fs := congestedDownlink(t)
	bg := map[string]lb.Module{"leaf3": viaSpine1{}}
	var m *Module
	allocs := func(scale int64) float64 {
		big := append([]fabric.Flow(nil), fs...)
		for i := range big {
			big[i].Bytes *= scale
		}
		return testing.AllocsPerRun(1, func() {
			m = newModule(t, nil)
			lbtest.Run(t, topo, fabric.DefaultConfig(), m, bg, big)
		})
	}
	a8, a16 := allocs(8), allocs(16)
	if s := m.Stats(); s.Reroutes == 0 || s.Reordering.Held == 0 || s.Reports == 0 {
		t.Fatalf("the long run rerouted, held or reported nothing: %+v", s)
	}
	t.Logf("allocations: %.0f with 8 times the bytes, %.0f with 16", a8, a16)
	if a16-a8 > 150 {
		t.Errorf("%.0f allocations with 8 times the bytes, %.0f with 16: allocation grows with packets", a8, a16)
	}
}
