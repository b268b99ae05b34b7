package fabric

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// Each registered engine builds from the registry and runs a flow; the
// packet-level one keeps transport counters, as its Packets says.
func TestEnginesRegistry(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:1x2:1@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	reg := Engines()
	if got := strings.Join(reg.Names(), ","); got != "flow,packet" {
		t.Errorf("engines %s", got)
	}
	for _, name := range reg.Names() {
		k, err := reg.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Seed = 1
		e, err := k.New(topo, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := e.Run(context.Background(), []Flow{{ID: 1, Src: "h1", Dst: "h2", Bytes: 64 << 10}}, RunOptions{})
		if err != nil || len(res) != 1 || res[0].Err != "" || res[0].End <= 0 {
			t.Errorf("%s: run %+v %v", name, res, err)
		}
		if e.Counters().Transport != k.Packets {
			t.Errorf("%s: transport counters %v, Packets %v", name, e.Counters().Transport, k.Packets)
		}
	}
	if _, err := reg.Get("pakcet"); err == nil || !strings.Contains(err.Error(), `unknown engine (did you mean "packet"?); known: flow, packet`) {
		t.Errorf("unknown engine: %v", err)
	}
}
