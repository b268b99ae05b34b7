package fabric

import (
	"fmt"
	"math"
	"testing"

	"github.com/labctl/labctl/inventory"
)

func TestFatTreePathsAndSingleFlow(t *testing.T) {
	lab, err := inventory.Generate("fattree:4@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	cores := map[string]int{}
	for i := 0; i < 64; i++ {
		// h1..h4 are in pod 1, h13..h16 in pod 4
		hops, err := topo.Path(Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i%4), Dst: fmt.Sprintf("h%d", 13+i%4)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(hops) != 6 {
			t.Fatalf("cross-pod path of %d links, want 6 (host-edge-agg-core-agg-edge-host)", len(hops))
		}
		cores[hops[2].Next]++
	}
	if len(cores) != 4 {
		t.Errorf("ECMP used %d of the 4 core switches: %v", len(cores), cores)
	}
	f := Flow{ID: 1, Src: "h1", Dst: "h16", Bytes: 8 << 20}
	ideal, _ := topo.IdealFCT(f, DefaultConfig())
	pkt := float64(4096+82) * 8 / 100
	for name, e := range map[string]Engine{"flow": NewFlowEngine(topo, DefaultConfig()), "packet": NewPacketEngine(topo, DefaultConfig())} {
		r := run(t, e, []Flow{f})[0]
		if got := float64(r.End - r.Start); math.Abs(got-float64(ideal)) > pkt {
			t.Errorf("%s engine: FCT %.0f ns on 6 hops, want %d within one packet time", name, got, ideal)
		}
	}
}
