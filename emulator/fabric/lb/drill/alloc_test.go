package drill

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestNoAllocationPerPacket: the same flows between two racks with 8
// times the bytes allocate about the same: DRILL's memory and its per-flow
// reroute count (Counts) grow per flow and per switch, not per packet.
func TestNoAllocationPerPacket(t *testing.T) {
	topo, _ := lbtest.Topology(t, "leafspine:2x4:4@100", nil)
	reg := lb.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	allocs := func(bytes int64) (float64, []lb.Count) {
		var counts []lb.Count
		n := testing.AllocsPerRun(1, func() {
			m, err := reg.New("drill", map[string]string{"d": "2", "m": "1"})
			if err != nil {
				t.Fatal(err)
			}
			var flows []fabric.Flow
			for i := 0; i < 4; i++ {
				flows = append(flows, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i), Dst: fmt.Sprintf("h%d", 5+i), Bytes: bytes})
			}
			lbtest.Run(t, topo, fabric.DefaultConfig(), m, nil, flows)
			counts = m.(lb.Counting).Counts(nil)
		})
		return n, counts
	}
	small, _ := allocs(1 << 20)
	large, c := allocs(8 << 20)
	t.Logf("allocations: %.0f with 1 MiB flows, %.0f with 8 MiB; %v", small, large, c)
	if c[0].Value == 0 || c[1].Value == 0 {
		t.Fatalf("the large run decided or rerouted nothing: %v", c)
	}
	if large-small > 300 {
		t.Errorf("%.0f allocations for 1 MiB flows, %.0f for 8 MiB: allocation grows with packets", small, large)
	}
}
