package flb_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var flbParams = flag.String("flb", "", "FLB parameters for BenchmarkFLBWebSearch08, name=value,...")

// BenchmarkFLBWebSearch08 is the engine's BenchmarkPapersWebSearch08 (the
// 128-host papers' setting: 8 spines x 8 leaves x 16 hosts at 100 Gb/s,
// PFC, DCQCN, WebSearch at 0.8 load for 10 ms of simulated time) with
// every switch running FLB at its defaults (FLB+DCQCN), beside the
// built-in ECMP in the same process: events per CPU second (run with
// -cpu 1); -flb name=value,... changes FLB's parameters. It logs what
// FLB did.
func BenchmarkFLBWebSearch08(b *testing.B) {
	topo, flows := lbtest.WebSearch(b, "leafspine:8x8:16@100", 0.8, 10*time.Millisecond, 1)
	for _, scheme := range []string{"ecmp-builtin", "flb"} {
		b.Run(scheme, func(b *testing.B) {
			reg := lb.NewRegistry()
			if err := flb.Register(reg); err != nil {
				b.Fatal(err)
			}
			kept := &lbtest.Keep[lb.Module]{Make: reg.New}
			cfg := fabric.DefaultConfig()
			cfg.MaxSimNs, cfg.Modules = 10_000_000, kept
			if scheme == "flb" {
				cfg.LB, cfg.LBParams = "flb", lbtest.ParseParams(*flbParams)
			}
			var events uint64
			var e *fabric.PacketEngine
			cpu := lbtest.CPUTime(b)
			for i := 0; i < b.N; i++ {
				kept.Made = kept.Made[:0]
				var err error
				if e, err = fabric.NewPacketEngineLB(topo, cfg, nil); err != nil {
					b.Fatal(err)
				}
				if _, err := e.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
					b.Fatal(err)
				}
				events += e.Events()
			}
			lbtest.ReportEvents(b, events, lbtest.CPUTime(b)-cpu)
			b.StopTimer()
			var ooo, retx uint64
			for _, c := range e.Counters().Ports {
				ooo, retx = ooo+c.OutOfSequence, retx+c.Retransmits
			}
			b.Logf("%d flows; FLB %+v; %d out of sequence, %d retransmitted", len(flows), sumStats(kept.Made), ooo, retx)
		})
	}
}
