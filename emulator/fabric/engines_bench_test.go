package fabric

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

var (
	enginesMaxK = flag.Int("engines-maxk", 8, "largest fat-tree k that BenchmarkEnginesFatTree runs (12 and 16 take minutes)")
	flowQuantum = flag.Int64("flow-quantum", 0, "BenchmarkEnginesFatTree: the flow engine's Config.FlowQuantumNs (0: default, -1: exact)")
	enginesMinK = flag.Int("engines-mink", 4, "smallest fat-tree k that BenchmarkEnginesFatTree runs")
)

// fatTreeWorkload is the paper-scale point of the scale issue on fattree:k:
// AliStorage at 0.5 load, arrivals over 1 ms, seed 1 (every flow runs to
// completion).
func fatTreeWorkload(tb testing.TB, k int) (*Topology, []Flow) {
	topo, eps := generatedHosts(tb, fmt.Sprintf("fattree:%d", k))
	return topo, workload(tb, eps, "alistorage2019", 0.5, time.Millisecond)
}

// generatedHosts is the topology of a generated lab and its hosts' first
// RNICs as workload endpoints.
func generatedHosts(tb testing.TB, spec string) (*Topology, []perftest.Endpoint) {
	lab, err := inventory.Generate(spec)
	if err != nil {
		tb.Fatal(err)
	}
	topo, err := NewTopology(lab)
	if err != nil {
		tb.Fatal(err)
	}
	var eps []perftest.Endpoint
	for _, h := range lab.Hosts {
		eps = append(eps, perftest.Endpoint{Host: h.Name, Dev: "mlx5_0", IP: h.RNICs[0].IP})
	}
	return topo, eps
}

// BenchmarkEnginesFatTree runs the same flows through both engines on
// fat-trees of k = 4, 8, 12 and 16 (16 to 1,024 hosts) and reports CPU
// seconds per run beside each engine's slowdown (mean and p99 per flow-size
// bucket), so one run shows both the speed and the flow engine's error.
// k above -engines-maxk (default 8) is skipped: the packet engine takes
// ~20 CPU-s at k = 16. Run with -benchtime 1x -cpu 1.
func BenchmarkEnginesFatTree(b *testing.B) {
	cfg := DefaultConfig()
	for _, k := range []int{4, 8, 12, 16} {
		for _, name := range []string{"packet", "flow"} {
			b.Run(fmt.Sprintf("k=%d/%s", k, name), func(b *testing.B) {
				if k > *enginesMaxK || k < *enginesMinK {
					b.Skipf("k=%d outside -engines-mink=%d..-engines-maxk=%d", k, *enginesMinK, *enginesMaxK)
				}
				topo, flows := fatTreeWorkload(b, k)
				var res []Result
				var e Engine
				b.ResetTimer()
				cpu := cpuTime(b)
				for i := 0; i < b.N; i++ {
					e = NewPacketEngine(topo, cfg)
					if name == "flow" {
						fc := cfg
						fc.FlowQuantumNs = *flowQuantum
						e = NewFlowEngine(topo, fc)
					}
					var err error
					if res, err = e.Run(context.Background(), flows, RunOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime(b)-cpu).Seconds()/float64(b.N), "cpu-s/op")
				b.StopTimer()
				b.ReportMetric(float64(len(flows)), "flows")
				b.Logf("fingerprint of results and counters: %s", fingerprint(res, e.Counters()))
				s := slowdownOf(b, topo, cfg, flows, res)
				for _, bk := range []struct {
					name string
					xs   []float64
				}{{"small", s.small}, {"medium", s.medium}, {"large", s.large}} {
					m, p := stat(bk.xs)
					b.ReportMetric(m, bk.name+"-mean")
					b.ReportMetric(p, bk.name+"-p99")
				}
			})
		}
	}
}
