package conweave

import (
	"flag"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestNoAllocationPerPacket: the same four flows rerouting over a slow and
// a fast spine, with 8 times the bytes (28672 more packets), allocate
// about the same: ConWeave's and the reorder tables grow per flow, not per
// packet. (The few more are the engine's event-queue node pool, which
// grows with the events pending at once; TestHooksDoNotAllocate pins
// ConWeave's own share at zero.)
func TestNoAllocationPerPacket(t *testing.T) {
	topo := leafSpine(t, true)
	allocs := func(bytes int64) (float64, Stats) {
		var s Stats
		n := testing.AllocsPerRun(1, func() {
			m := newModule(t, nil)
			lbtest.Run(t, topo, fabric.DefaultConfig(), m, nil, flows(4, bytes, "h5", "h6", "h7", "h8"))
			s = m.Stats()
		})
		return n, s
	}
	small, _ := allocs(1 << 20)
	large, s := allocs(8 << 20)
	if s.Reroutes == 0 || s.Reordering.Held == 0 || s.CtrlPkts == 0 {
		t.Fatalf("the large run rerouted, held or answered nothing: %+v", s)
	}
	t.Logf("allocations: %.0f with 1 MiB flows, %.0f with 8 MiB", small, large)
	// 7 MiB more per flow is 7168 more packets per flow.
	if large-small > 300 {
		t.Errorf("%.0f allocations for 1 MiB flows, %.0f for 8 MiB: allocation grows with packets", small, large)
	}
}

var benchParams = flag.String("conweave", "", "ConWeave parameters of BenchmarkConWeaveWebSearch08, name=value,... (a sweep: -conweave reorder_margin_us=32)")

// BenchmarkConWeaveWebSearch08 is lbtest.BenchWebSearch08 with ConWeave
// on every switch: the 128-host papers' setting at 0.8 load. Run with
// -benchtime 1x -cpu 1.
func BenchmarkConWeaveWebSearch08(b *testing.B) {
	params := lbtest.ParseParams(*benchParams)
	var m *Module
	lbtest.BenchWebSearch08(b, func() lb.Module { m = newModule(b, params); return m })
	b.Logf("%+v", m.Stats())
}
