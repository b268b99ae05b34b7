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

// TestGeneratedLinkDelay: a generated lab's delay option reaches the twin.
// One flow over the 6 hops of fattree:4 with 5 us links takes 48 us longer
// than with the default 1 us (4 us more per hop, data out and ACK back:
// the ideal FCT includes the base round trip), in both engines within one
// packet time of the analytic figure.
func TestGeneratedLinkDelay(t *testing.T) {
	t.Parallel()
	f := Flow{ID: 1, Src: "h1", Dst: "h16", Bytes: 1 << 20}
	ideal := map[string]int64{}
	for _, spec := range []string{"fattree:4@100", "fattree:4@100,delay=5us"} {
		topo, _ := generatedHosts(t, spec)
		var err error
		if ideal[spec], err = topo.IdealFCT(f, DefaultConfig()); err != nil {
			t.Fatal(err)
		}
		pkt := float64(4096+82) * 8 / 100
		for name, e := range map[string]Engine{"flow": NewFlowEngine(topo, DefaultConfig()), "packet": NewPacketEngine(topo, DefaultConfig())} {
			r := run(t, e, []Flow{f})[0]
			if got := float64(r.End - r.Start); math.Abs(got-float64(ideal[spec])) > pkt {
				t.Errorf("%s, %s engine: FCT %.0f ns, want %d within one packet time", spec, name, got, ideal[spec])
			}
		}
	}
	if d := ideal["fattree:4@100,delay=5us"] - ideal["fattree:4@100"]; d != 2*6*4000 {
		t.Errorf("5 us links add %d ns to the ideal FCT, want %d", d, 2*6*4000)
	}
}
