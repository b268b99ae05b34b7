package conga

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/perftest"
)

// BenchmarkPapersWebSearch08 is the engine's benchmark of the same name
// (the 128-host papers' setting: 8 spines x 8 leaves x 16 hosts at
// 100 Gb/s, WebSearch at 0.8 load for 10 ms of simulated time) with every
// switch running CONGA at its defaults, beside the built-in ECMP measured
// in the same process: events per CPU second (run with -cpu 1).
func BenchmarkPapersWebSearch08(b *testing.B) {
	lab, topo := topology(b, "leafspine:8x8:16@100")
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
	flows := make([]fabric.Flow, len(pf))
	for i, f := range pf {
		flows[i] = fabric.Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Start: int64(f.Offset), Priority: 3}
	}
	reg := lb.NewRegistry()
	if err := Register(reg); err != nil {
		b.Fatal(err)
	}
	for _, scheme := range []string{"", "conga"} {
		name := scheme
		if name == "" {
			name = "ecmp-builtin"
		}
		b.Run(name, func(b *testing.B) {
			cfg := fabric.DefaultConfig()
			cfg.MaxSimNs, cfg.LB, cfg.Modules = 10_000_000, scheme, reg
			var events uint64
			cpu := cpuTime(b)
			for i := 0; i < b.N; i++ {
				e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
					b.Fatal(err)
				}
				events += e.Events()
			}
			used := cpuTime(b) - cpu
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
			b.ReportMetric(float64(events)/used.Seconds(), "events/cpu-s")
			b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(flows)), "flows")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
