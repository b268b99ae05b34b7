package selb

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/conweave"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var (
	benchParams = flag.String("selb", "", "SELB parameters of BenchmarkSELBWebSearch08, name=value,... (e.g. -selb theta=500,k=2)")
	sweep       = flag.Bool("sweep", false, "run TestParameterSweep (minutes of CPU)")
	sweepTopo   = flag.String("sweep.topo", "leafspine:4x4:8@100", "TestParameterSweep's fabric")
	sweepOnly   = flag.String("sweep.only", "", "TestParameterSweep: only this SELB setting (name=value,...; \"-\": the defaults) beside ECMP and ConWeave")
	sweepQueues = flag.Int("sweep.queues", 8, "TestParameterSweep: reorder queues a port (0: unlimited)")
)

// BenchmarkSELBWebSearch08 is lbtest.BenchWebSearch08 with SELB on
// every switch: the 128-host papers' setting at 0.8 load. Run with
// -benchtime 1x -cpu 1.
func BenchmarkSELBWebSearch08(b *testing.B) {
	params := lbtest.ParseParams(*benchParams)
	var m *Module
	lbtest.BenchWebSearch08(b, func() lb.Module { m = newModule(b, params); return m })
	s, rs := m.Stats()
	b.Logf("%+v; reordering %+v", s, rs)
}

// TestParameterSweep chooses the defaults the paper leaves out (θ, k,
// the period): AliStorage at load 0.6 on 4 spines x 4 leaves x 8 hosts
// (2:1 oversubscribed, as the paper's motivation; the uplinks are offered
// about 0.9 of their capacity; -sweep.topo leafspine:8x4:16@100 for 8
// paths), arrivals over 1 ms, every flow to
// completion, lossless go-back-N, 8 reorder queues a port, seeds 1-5.
// Per setting: avg and p99 FCT (means over the seeds), reroutes, reorder
// queues taken, fallbacks and packets out of sequence (sums); ECMP and
// ConWeave beside; k = 1 is SELB without clustering. The rule, fixed
// before the run: the lowest mean avg FCT; within 1 % of it, fewer
// reroutes. Run with -sweep (docs/fabric-twin.md has the table).
func TestParameterSweep(t *testing.T) {
	if !*sweep {
		t.Skip("-sweep not given")
	}
	cfg := fabric.DefaultConfig()
	cfg.ReorderQueues = *sweepQueues
	type input struct {
		topo *fabric.Topology
		fs   []fabric.Flow
	}
	var seeds []input
	for seed := int64(1); seed <= 5; seed++ {
		topo, fs := lbtest.Poisson(t, *sweepTopo, "alistorage2019", 0.6, time.Millisecond, seed)
		seeds = append(seeds, input{topo, fs})
	}
	// one runs a scheme on every seed; reroutes reads a fresh module's count.
	one := func(name string, mk func() (lb.Module, func() int64)) {
		var avg, p99 float64
		var reroutes, queues, fallbacks, ooo int64
		for _, in := range seeds {
			m, rr := mk()
			e, err := fabric.NewPacketEngineLB(in.topo, cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(context.Background(), in.fs, fabric.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var fct []float64
			var sum float64
			for _, r := range res {
				if r.Err != "" {
					t.Fatalf("flow %d: %s", r.ID, r.Err)
				}
				d := float64(r.End-r.Start) / 1000
				fct, sum = append(fct, d), sum+d
			}
			slices.Sort(fct)
			avg += sum / float64(len(fct)) / float64(len(seeds))
			p99 += fct[len(fct)*99/100] / float64(len(seeds))
			for _, c := range e.Counters().Ports {
				ooo += int64(c.OutOfSequence)
			}
			rq := e.ReorderStats()
			reroutes, queues, fallbacks = reroutes+rr(), queues+int64(rq.Allocs), fallbacks+int64(rq.Fallbacks)
		}
		fmt.Printf("| %s | %.2f | %.0f | %d | %d | %d | %d |\n", name, avg, p99, reroutes, queues, fallbacks, ooo)
	}
	fmt.Println("| scheme | avg FCT us | p99 FCT us | reroutes | reorder queues | fallbacks | out of sequence |")
	one("ecmp", func() (lb.Module, func() int64) { return ecmp.Module{}, func() int64 { return 0 } })
	one("conweave", func() (lb.Module, func() int64) {
		m := conweaveModule(t)
		return m, func() int64 { return m.Stats().Reroutes }
	})
	if *sweepOnly != "" {
		one("selb "+*sweepOnly, func() (lb.Module, func() int64) {
			m := newModule(t, lbtest.ParseParams(*sweepOnly))
			return m, func() int64 { s, _ := m.Stats(); return s.Reroutes }
		})
		return
	}
	for _, k := range []string{"1", "2", "3", "4"} {
		for _, period := range []string{"1", "2", "5", "10"} {
			for _, theta := range []string{"0", "500", "2000", "8000"} {
				one(fmt.Sprintf("selb k=%s period_us=%s theta=%s", k, period, theta), func() (lb.Module, func() int64) {
					m := newModule(t, map[string]string{"k": k, "period_us": period, "theta": theta})
					return m, func() int64 { s, _ := m.Stats(); return s.Reroutes }
				})
			}
		}
	}
}

// conweaveModule is ConWeave at its defaults: the sweeps' comparison.
func conweaveModule(t testing.TB) *conweave.Module {
	t.Helper()
	return lbtest.New[*conweave.Module](t, conweave.Register, "conweave", nil)
}
