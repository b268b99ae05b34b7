package reunion

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestNoAllocationPerPacket: the same ring of elephants between two racks
// (4 spines, so some collide and are rerouted every 50 us interval), with
// 8 times the bytes (57344 more packets), allocates about the same:
// Reunion's tables grow per flow and per switch, not per packet.
func TestNoAllocationPerPacket(t *testing.T) {
	topo, _ := lbtest.Topology(t, "leafspine:4x2:4@100", nil)
	allocs := func(bytes int64) (float64, Stats) {
		var s Stats
		n := testing.AllocsPerRun(1, func() {
			m := newModule(t, map[string]string{"interval_us": "50"})
			lbtest.Run(t, topo, fabric.DefaultConfig(), m, nil, ring(2, 4, bytes))
			s = m.Stats()
		})
		return n, s
	}
	small, _ := allocs(1 << 20)
	large, s := allocs(8 << 20)
	if s.Reroutes == 0 || s.Notifies == 0 || s.Marked == 0 {
		t.Fatalf("the large run rerouted, notified or marked nothing: %+v", s)
	}
	t.Logf("allocations: %.0f with 1 MiB flows, %.0f with 8 MiB; %+v", small, large, s)
	if large-small > 300 {
		t.Errorf("%.0f allocations for 1 MiB flows, %.0f for 8 MiB: allocation grows with packets", small, large)
	}
}

// made keeps the modules a registry makes for an engine's switches.
type made struct {
	reg *lb.Registry
	all []*Module
}

func (k *made) New(name string, params map[string]string) (lb.Module, error) {
	m, err := k.reg.New(name, params)
	if err == nil {
		k.all = append(k.all, m.(*Module))
	}
	return m, err
}

// TestDeterministicForASeed: with a module per switch, made by the
// registry as the emulator makes them, two engines with the same seed
// give the same FCTs and the same Reunion counters, on a leaf-spine and
// on a fat-tree (paths of four hops through aggregation and core
// switches), with elephants and mice.
func TestDeterministicForASeed(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"leafspine:4x4:4@100", "fattree:4@100"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			topo, _ := lbtest.Topology(t, spec, nil)
			var flows []fabric.Flow
			for i := 0; i < 48; i++ { // elephants and mice, staggered
				bytes := int64(32 << 10)
				if i%3 == 0 {
					bytes = 4 << 20
				}
				flows = append(flows, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i%16), Dst: fmt.Sprintf("h%d", 1+(i*7+5)%16),
					Bytes: bytes, Start: int64(i%10) * 20_000, Priority: 3})
			}
			run := func() (string, Stats) {
				reg := lb.NewRegistry()
				if err := Register(reg); err != nil {
					t.Fatal(err)
				}
				mods := &made{reg: reg}
				cfg := fabric.DefaultConfig()
				cfg.Seed, cfg.LB, cfg.Modules, cfg.LBParams = 5, "reunion", mods, map[string]string{"interval_us": "50"}
				s := ""
				for _, r := range lbtest.Run(t, topo, cfg, nil, nil, flows).Results {
					s += fmt.Sprintf("%d:%d ", r.ID, r.End-r.Start)
				}
				var sum Stats
				for _, m := range mods.all {
					st := m.Stats()
					sum.ElephantPkts += st.ElephantPkts
					sum.Marked += st.Marked
					sum.Notifies += st.Notifies
					sum.Reroutes += st.Reroutes
					sum.Flowlets += st.Flowlets
				}
				return s, sum
			}
			a, sa := run()
			b, sb := run()
			if a != b || sa != sb {
				t.Errorf("same seed, different runs:\n%s %+v\n%s %+v", a, sa, b, sb)
			}
			t.Logf("%+v", sa)
			if sa.ElephantPkts == 0 || sa.Marked == 0 {
				t.Errorf("nothing marked: %+v", sa)
			}
		})
	}
}
