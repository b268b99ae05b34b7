package fabric

import (
	"math"
	"testing"
	"time"
)

// flowErrorBounds are the flow engine's documented errors against the
// packet engine (docs/fabric-twin.md, "Flow engine: speed and error"): the
// most the mean and the p99 slowdown of a flow-size bucket may differ, as
// a fraction of the packet engine's, on fattree:4 with AliStorage at 0.5
// load over 10 ms (seed 1; enough flows for a p99 in every bucket) and the
// default quantum.
var flowErrorBounds = []struct {
	bucket    string
	mean, p99 float64
}{
	{"<100 KB", 0.55, 0.85},
	{"100 KB-1 MB", 0.15, 0.50},
	{">=1 MB", 0.45, 0.50},
}

// TestFlowEngineErrorAgainstPacket runs the same flows through both
// engines on a small fat-tree and requires the flow engine's mean and p99
// slowdown per size bucket to stay within the documented error of the
// packet engine's.
func TestFlowEngineErrorAgainstPacket(t *testing.T) {
	if testing.Short() {
		t.Skip("10 ms of traffic on both engines")
	}
	topo, eps := generatedHosts(t, "fattree:4")
	flows := workload(t, eps, "alistorage2019", 0.5, 10*time.Millisecond)
	cfg := DefaultConfig()
	pk := slowdownOf(t, topo, cfg, flows, run(t, NewPacketEngine(topo, cfg), flows))
	fl := slowdownOf(t, topo, cfg, flows, run(t, NewFlowEngine(topo, cfg), flows))
	for i, b := range [][2][]float64{{pk.small, fl.small}, {pk.medium, fl.medium}, {pk.large, fl.large}} {
		bound := flowErrorBounds[i]
		if len(b[0]) < 200 {
			t.Fatalf("%s: %d flows, too few for a p99", bound.bucket, len(b[0]))
		}
		pm, pp := stat(b[0])
		fm, fp := stat(b[1])
		em, ep := math.Abs(fm-pm)/pm, math.Abs(fp-pp)/pp
		t.Logf("%s (%d flows): mean slowdown packet %.2f flow %.2f (error %.0f%%), p99 packet %.2f flow %.2f (error %.0f%%)",
			bound.bucket, len(b[0]), pm, fm, em*100, pp, fp, ep*100)
		if em > bound.mean || ep > bound.p99 {
			t.Errorf("%s: flow engine's error %.0f%% (mean) / %.0f%% (p99) beyond the documented %.0f%% / %.0f%%",
				bound.bucket, em*100, ep*100, bound.mean*100, bound.p99*100)
		}
	}
}
