package conga

import (
	"context"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// BenchmarkPapersWebSearch08 is the engine's benchmark of the same name
// (the 128-host papers' setting: 8 spines x 8 leaves x 16 hosts at
// 100 Gb/s, WebSearch at 0.8 load for 10 ms of simulated time) with every
// switch running CONGA at its defaults, beside the built-in ECMP measured
// in the same process: events per CPU second (run with -cpu 1).
func BenchmarkPapersWebSearch08(b *testing.B) {
	topo, flows := lbtest.WebSearch(b, "leafspine:8x8:16@100", 0.8, 10*time.Millisecond, 1)
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
			cpu := lbtest.CPUTime(b)
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
			lbtest.ReportEvents(b, events, lbtest.CPUTime(b)-cpu)
			b.ReportMetric(float64(len(flows)), "flows")
		})
	}
}
