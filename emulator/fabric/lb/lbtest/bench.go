package lbtest

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/perftest"
)

// WebSearch is Poisson with the WebSearch workload.
func WebSearch(t testing.TB, spec string, load float64, d time.Duration, seed int64) (*fabric.Topology, []fabric.Flow) {
	t.Helper()
	return Poisson(t, spec, "websearch", load, d, seed)
}

// Poisson is a generated lab's fabric with Poisson flows of a workload
// (perftest/workloads/<cdf>.cdf) among its hosts at a host load over
// 100 Gb/s links, arriving over d.
func Poisson(t testing.TB, spec, cdf string, load float64, d time.Duration, seed int64) (*fabric.Topology, []fabric.Flow) {
	t.Helper()
	topo, lab := Topology(t, spec, nil)
	var eps []perftest.Endpoint
	for _, h := range lab.Hosts {
		eps = append(eps, perftest.Endpoint{Host: h.Name, Dev: "mlx5_0", IP: h.RNICs[0].IP})
	}
	_, here, _, _ := runtime.Caller(0)
	c, err := perftest.LoadCDF(filepath.Join(filepath.Dir(here), "../../../../perftest/workloads", cdf+".cdf"))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := perftest.Poisson(perftest.PoissonParams{Hosts: eps, CDF: c, Load: load, LinkGbps: 100, Duration: d, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	fs := make([]fabric.Flow, len(pf))
	for i, f := range pf {
		fs[i] = fabric.Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Start: int64(f.Offset), Priority: 3}
	}
	return topo, fs
}

// ParseParams reads "name=value,..." (a benchmark flag) into a
// parameter map.
func ParseParams(s string) map[string]string {
	params := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			params[k] = v
		}
	}
	return params
}

// BenchWebSearch08 is BenchmarkPapersWebSearch08 (package fabric) with a
// module from mk on every switch: the 128-host papers' setting (8 spines
// x 8 leaves x 16 hosts at 100 Gb/s, PFC, DCQCN), WebSearch flows at 0.8
// load arriving over 10 ms, the run stopping at 10 ms. It reports events
// per run and per CPU second and CPU seconds per run, logs the receivers'
// out-of-sequence packets and the senders' retransmissions, and returns
// the last run's engine.
func BenchWebSearch08(b *testing.B, mk func() lb.Module) *fabric.PacketEngine {
	topo, fs := WebSearch(b, "leafspine:8x8:16@100", 0.8, 10*time.Millisecond, 1)
	cfg := fabric.DefaultConfig()
	cfg.MaxSimNs = 10_000_000
	var events uint64
	var e *fabric.PacketEngine
	var err error
	b.ResetTimer()
	cpu := CPUTime(b)
	for i := 0; i < b.N; i++ {
		if e, err = fabric.NewPacketEngineLB(topo, cfg, mk()); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Run(context.Background(), fs, fabric.RunOptions{}); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	ReportEvents(b, events, CPUTime(b)-cpu)
	b.StopTimer()
	var ooo, retx uint64
	for _, c := range e.Counters().Ports {
		ooo, retx = ooo+c.OutOfSequence, retx+c.Retransmits
	}
	b.Logf("%d flows; engine reorder queues %+v; receivers saw %d packets out of sequence, senders retransmitted %d",
		len(fs), e.ReorderStats(), ooo, retx)
	return e
}

// ReportEvents reports a benchmark's events per run and per CPU second
// and its CPU seconds per run, from the events of all b.N runs and the
// CPU time they used.
func ReportEvents(b *testing.B, events uint64, used time.Duration) {
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(events)/used.Seconds(), "events/cpu-s")
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
}

// CPUTime is the user and system CPU time the process has used so far:
// a benchmark's cost on a shared machine, where wall time is not.
func CPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
