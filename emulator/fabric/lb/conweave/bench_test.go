package conweave

import (
	"context"
	"flag"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/perftest"
)

// TestNoAllocationPerPacket: the same four flows rerouting over a slow and
// a fast spine, with 8 times the bytes (28672 more packets), allocate
// about the same: ConWeave's and the reorder tables grow per flow, not per
// packet. (The hundred or so more are the engine's event-queue buckets,
// which grow with the timers pending at once; TestHooksDoNotAllocate
// pins ConWeave's own share at zero.)
func TestNoAllocationPerPacket(t *testing.T) {
	topo := leafSpine(t, true)
	allocs := func(bytes int64) (float64, Stats) {
		var s Stats
		n := testing.AllocsPerRun(1, func() {
			m := newModule(t, nil)
			runFlows(t, topo, fabric.DefaultConfig(), m, flows(4, bytes, "h5", "h6", "h7", "h8"))
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

// BenchmarkConWeaveWebSearch08 is BenchmarkPapersWebSearch08 (package
// fabric) with ConWeave on every switch: the 128-host papers' setting
// (8 spines x 8 leaves x 16 hosts at 100 Gb/s, PFC, DCQCN), WebSearch
// flows at 0.8 load arriving over 10 ms, the run stopping at 10 ms. Run
// with -benchtime 1x -cpu 1.
func BenchmarkConWeaveWebSearch08(b *testing.B) {
	topo, lab := generate(b, "leafspine:8x8:16@100", nil)
	var eps []perftest.Endpoint
	for _, h := range lab.Hosts {
		eps = append(eps, perftest.Endpoint{Host: h.Name, Dev: "mlx5_0", IP: h.RNICs[0].IP})
	}
	cdf, err := perftest.LoadCDF("../../../../perftest/workloads/websearch.cdf")
	if err != nil {
		b.Fatal(err)
	}
	pf, err := perftest.Poisson(perftest.PoissonParams{Hosts: eps, CDF: cdf, Load: 0.8, LinkGbps: 100, Duration: 10 * time.Millisecond, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	fs := make([]fabric.Flow, len(pf))
	for i, f := range pf {
		fs[i] = fabric.Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Start: int64(f.Offset), Priority: 3}
	}
	params := map[string]string{}
	for _, kv := range strings.Split(*benchParams, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			params[k] = v
		}
	}
	cfg := fabric.DefaultConfig()
	cfg.MaxSimNs = 10_000_000
	var events uint64
	var m *Module
	var e *fabric.PacketEngine
	b.ResetTimer()
	cpu := cpuTime(b)
	for i := 0; i < b.N; i++ {
		m = newModule(b, params)
		if e, err = fabric.NewPacketEngineLB(topo, cfg, m); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Run(context.Background(), fs, fabric.RunOptions{}); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	used := cpuTime(b) - cpu
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(events)/used.Seconds(), "events/cpu-s")
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
	b.StopTimer()
	var ooo, retx uint64
	for _, c := range e.Counters().Ports {
		ooo, retx = ooo+c.OutOfSequence, retx+c.Retransmits
	}
	b.Logf("%d flows; %+v; engine reorder queues %+v; receivers saw %d packets out of sequence, senders retransmitted %d",
		len(fs), m.Stats(), e.ReorderStats(), ooo, retx)
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
