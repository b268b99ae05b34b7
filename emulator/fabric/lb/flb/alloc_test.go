package flb_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
)

// TestEngineWithFLBAllocatesPerRunNotPerPacket: a run of 8 times the
// packets, with FLB isolating flows on CNMs and FLB+RC pausing them,
// allocates no more than a short one: nothing is allocated per packet
// (nor per CNM).
func TestEngineWithFLBAllocatesPerRunNotPerPacket(t *testing.T) {
	topo, _ := lbtest.Topology(t, "leafspine:2x2:2@100", nil)
	ss := &lbtest.Keep[lb.Module]{Make: schemes.MustRegistry().New}
	cfg := fabric.DefaultConfig()
	cfg.DCQCN.Enabled = false
	cfg.LB, cfg.Modules, cfg.HostLB, cfg.HostModules = "flb", ss, "flbrc", hostschemes.MustRegistry()
	e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(bytes int64) (float64, int64) {
		flows := []fabric.Flow{{ID: 0, Src: "h1", Dst: "h3", Bytes: bytes, Priority: 3}, {ID: 1, Src: "h2", Dst: "h3", Bytes: bytes, Priority: 3},
			{ID: 2, Src: "h4", Dst: "h3", Bytes: bytes, Priority: 3}}
		run := func() {
			if _, err := e.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		run() // warm: pools and tables at their peak
		var cnms int64
		a := testing.AllocsPerRun(3, run)
		for _, m := range ss.Made {
			cnms += m.(interface{ Stats() flb.Stats }).Stats().CNMs
		}
		return a, cnms
	}
	short, _ := allocs(1 << 20)
	long, cnms := allocs(8 << 20)
	t.Logf("allocations per run: %.0f (1 MiB flows), %.0f (8 MiB flows); %d CNMs in the long run", short, long, cnms)
	if cnms < 10 {
		t.Fatalf("only %d CNMs: the isolation path was not exercised", cnms)
	}
	if long > short+2 {
		t.Errorf("%.0f allocations for 8 MiB flows, %.0f for 1 MiB: some grow with the packets", long, short)
	}
}

// TestFLBRunsAreDeterministic: the micro-benchmark twice on fresh
// engines, FLB and FLB+RC, gives the same outcome.
func TestFLBRunsAreDeterministic(t *testing.T) {
	t.Parallel()
	topo, fs := microTopology(t), microFlows()
	a := runMicro(t, topo, fs, "flb", nil, "flbrc", nil)
	b := runMicro(t, topo, fs, "flb", nil, "flbrc", nil)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%v %+v\n%v %+v", a, a.flb, b, b.flb)
	}
	if a.flb.Isolated == 0 || a.host.Pauses == 0 {
		t.Errorf("nothing isolated or paused (%+v, %+v): the CNM paths were not compared", a.flb, a.host)
	}
}
