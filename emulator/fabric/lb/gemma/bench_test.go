package gemma

import (
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var (
	benchParams = flag.String("gemma", "", "Gemma parameters of BenchmarkGemmaWebSearch08, name=value,... (e.g. -gemma s_reroute=1)")
	sweep       = flag.Bool("gemma.sweep", false, "run TestSweep (the defaults' sweep in docs/fabric-twin.md)")
	sweepLoad   = flag.Float64("gemma.load", 0.5, "TestSweep's host load")
)

// BenchmarkGemmaWebSearch08 is lbtest.BenchWebSearch08 with Gemma on
// every switch: the 128-host papers' setting at 0.8 load. Run with
// -benchtime 1x -cpu 1.
func BenchmarkGemmaWebSearch08(b *testing.B) {
	params := lbtest.ParseParams(*benchParams)
	var m *Module
	lbtest.BenchWebSearch08(b, func() lb.Module { m = newModule(b, params); return m })
	b.Logf("%+v", m.Stats())
}

// TestSweep is the sweep behind Gemma's defaults (docs/fabric-twin.md):
// on a 4 x 4 leaf-spine of 8 hosts a leaf (2:1), WebSearch at host load
// 0.5 (the uplinks about 0.75 loaded; -gemma.load sets it) arriving over 3 ms, lossless
// go-back-N, seeds 1 to 8 (averaged), one parameter changed at a time from the
// defaults; it prints avg and p99 FCT, reroutes per thousand packets
// decided, control bytes as a share of all bytes sent, and packets out of
// sequence. Run: go test -run TestSweep -gemma.sweep -v ./emulator/fabric/lb/gemma
// (-gemma name=value,... sets the base).
func TestSweep(t *testing.T) {
	if !*sweep {
		t.Skip("the defaults' sweep: -gemma.sweep")
	}
	base := lbtest.ParseParams(*benchParams)
	points := [][2]string{{"", ""},
		{"s_reroute", "0.25"}, {"s_reroute", "0.5"}, {"s_reroute", "1"}, {"s_reroute", "2"},
		{"beta", "0"}, {"beta", "2"}, {"alpha", "0"},
		{"gap", "0"}, {"gap", "0.5"}, {"gap", "1"},
		{"report_max_us", "8"}, {"report_max_us", "32"}, {"report_max_us", "128"}, {"report_min_us", "8"}, {"report_change_kb", "100"},
	}
	const seeds = 8
	t.Logf("%-22s %9s %9s %8s %8s %7s %6s %6s %5s %5s", "point", "avg us", "p99 us", "rr/1k", "ctrl %", "ooo", "qs", "exp", "fb", "clrTO")
	row := func(name string, mk func() lb.Module, stats func(lb.Module) Stats) {
		var avg, p99, rr, ctrl, ooo, qs, exp, fb, cto float64
		for seed := int64(1); seed <= seeds; seed++ {
			topo, fs := lbtest.WebSearch(t, "leafspine:4x4:8@100", *sweepLoad, 3*time.Millisecond, seed)
			cfg := fabric.DefaultConfig()
			cfg.MaxSimNs = 50_000_000
			m := mk()
			o := lbtest.Run(t, topo, cfg, m, nil, fs)
			a, p := fctStats(o.FCTs)
			avg, p99 = avg+a/seeds, p99+p/seeds
			var tx uint64
			for _, c := range o.Ports {
				tx += c.TxBytes
			}
			if stats != nil {
				s := stats(m)
				rr += 1000 * float64(s.Reroutes) / float64(s.Smooth+s.Congested) / seeds
				ctrl += 100 * float64(s.CtrlBytes) / float64(tx) / seeds
				exp += float64(s.Reordering.Expired) / seeds
				cto += float64(s.ClearTimeouts) / seeds
			}
			ooo += float64(o.OOO) / seeds
			qs += float64(o.RQ.Allocs) / seeds
			fb += float64(o.RQ.Fallbacks) / seeds
		}
		t.Logf("%-22s %9.1f %9.1f %8.2f %8.3f %7.0f %6.0f %6.0f %5.0f %5.0f", name, avg/1000, p99/1000, rr, ctrl, ooo, qs, exp, fb, cto)
	}
	row("ecmp", func() lb.Module { return ecmp.Module{} }, nil)
	for _, pt := range points {
		params := map[string]string{}
		for k, v := range base {
			params[k] = v
		}
		name := "defaults"
		if pt[0] != "" {
			params[pt[0]], name = pt[1], pt[0]+"="+pt[1]
		}
		row(name, func() lb.Module { return newModule(t, params) }, func(m lb.Module) Stats { return m.(*Module).Stats() })
	}
}

// fctStats are the mean and the 99th percentile of fcts, ns.
func fctStats(fcts []int64) (avg, p99 float64) {
	s := append([]int64(nil), fcts...)
	var sum float64
	for _, f := range s {
		sum += float64(f)
	}
	slices.Sort(s)
	return sum / float64(len(s)), float64(s[min(len(s)-1, len(s)*99/100)])
}
