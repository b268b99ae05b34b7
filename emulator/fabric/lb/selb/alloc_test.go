package selb

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// fakeToR is a switch view for the hooks alone: a ToR (ID 0 or 1) with
// four uplinks (links 0-3, one per path to the other ToR) whose queue
// lengths the test sets.
type fakeToR struct {
	lbtest.FakeSwitch
	ports []lb.Egress
}

func newFakeToR(id int) *fakeToR {
	s := &fakeToR{FakeSwitch: lbtest.FakeSwitch{Self: id, Depth: make([]int64, 4)}}
	for i := range 4 {
		s.ports = append(s.ports, lb.Egress{Link: int32(i)})
		s.Routes = append(s.Routes, s.ports[i:i+1])
	}
	return s
}

func (s *fakeToR) SwitchTier(int) lb.Tier      { return lb.TierCore }
func (s *fakeToR) NumLinks() int               { return 4 }
func (s *fakeToR) Ports() []lb.Egress          { return s.ports }
func (s *fakeToR) LinkEnds(l int32) (int, int) { return s.Self, 10 + int(l) }

// TestHooksDoNotAllocate: once a flow's and the switch's tables exist,
// the sampling timer (queue reads, growth, k-means), Select at the source
// ToR (with reroutes and tails), Arrive at the destination ToR (held
// packets, CLEARs) and Receive allocate nothing.
func TestHooksDoNotAllocate(t *testing.T) {
	m := newModule(t, nil)
	src, dst := newFakeToR(0), newFakeToR(1)
	cands := make([]lb.Egress, 4)
	var air lbtest.Flight
	var ctl lb.Header
	c := lb.Packet{Kind: lb.Control, SrcToR: 1, DstToR: 0, Flow: -1, Hdr: &ctl}
	round := 0
	step := func() {
		round++
		src.Clock += 700
		if round%8 == 0 { // a period: one uplink's queue grows fast, by turns
			for i := range src.Depth {
				src.Depth[i] = int64(i) * 1000
			}
			src.Depth[round/8%4] += 50_000 * int64(round%16/8+1)
			m.Tick(src, tickSample)
		}
		air.Land(src.Clock, func(at int64, p *lb.Packet) {
			dst.Clock = at
			m.Arrive(dst, p, lb.Egress{Link: 2})
			if p.Hdr.Flags&lb.FlagTail != 0 { // the CLEAR comes back
				ctl = m.ctl
				m.Receive(src, &c)
			}
		})
		air.Launch(func(p *lb.Packet) int64 {
			m.Select(src, p, cands)
			return src.Clock + 2_000 + int64(src.Depth[p.Hdr.Path])/12
		})
	}
	for range 200 {
		step()
	}
	if n := testing.AllocsPerRun(2000, step); n != 0 {
		t.Errorf("%.2f allocations per packet", n)
	}
	if s, rs := m.Stats(); s.Reroutes == 0 || s.Clears == 0 || rs.Held == 0 || s.Samples == 0 {
		t.Errorf("the hooks did not exercise rerouting: %+v %+v", s, rs)
	}
}

// TestNoAllocationPerPacket: the same rerouting elephants with 4 times
// the bytes (98304 more packets, three times the reroutes) allocate
// about the same: SELB's and the reorder tables grow per flow and per
// switch, not per packet. (What grows is the engine's timing-wheel
// buckets, which reach their size as the sampling and reorder timers
// spread over the wheel: 1 MiB flows allocate about 500 fewer than 4 MiB
// ones, 8 and 16 MiB about the same.)
func TestNoAllocationPerPacket(t *testing.T) {
	topo, _ := lbtest.Topology(t, "leafspine:4x2:8@100", nil)
	allocs := func(bytes int64) (float64, Stats) {
		var s Stats
		n := testing.AllocsPerRun(1, func() {
			m := newModule(t, nil)
			run(t, topo, fabric.DefaultConfig(), m, elephants(8, bytes))
			s, _ = m.Stats()
		})
		return n, s
	}
	small, _ := allocs(4 << 20)
	large, s := allocs(16 << 20)
	if s.Reroutes == 0 || s.Clears == 0 {
		t.Fatalf("the large run did not reroute: %+v", s)
	}
	t.Logf("allocations: %.0f with 4 MiB flows, %.0f with 16 MiB", small, large)
	if large-small > 300 {
		t.Errorf("%.0f allocations for 4 MiB flows, %.0f for 16 MiB: allocation grows with packets", small, large)
	}
}
