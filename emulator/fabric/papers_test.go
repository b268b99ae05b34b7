package fabric

import (
	"context"
	"flag"
	"sort"
	"testing"
	"time"

	"github.com/labctl/labctl/perftest"
)

// papersSetting is the seeds' common ns-3 setting: a leaf-spine of 8 leaves
// x 8 spines, 16 hosts per leaf at 100 Gb/s with 1 us links (2:1
// oversubscribed at the leaves), PFC, DCQCN and ECMP.
func papersSetting(t testing.TB) (*Topology, []perftest.Endpoint) {
	return generatedHosts(t, "leafspine:8x8:16@100")
}

func workload(t testing.TB, eps []perftest.Endpoint, cdf string, load float64, dur time.Duration) []Flow {
	c, err := perftest.LoadCDF("../../perftest/workloads/" + cdf + ".cdf")
	if err != nil {
		t.Fatal(err)
	}
	pf, err := perftest.Poisson(perftest.PoissonParams{Hosts: eps, CDF: c, Load: load, LinkGbps: 100, Duration: dur, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	flows := make([]Flow, len(pf))
	for i, f := range pf {
		flows[i] = Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Start: int64(f.Offset), Priority: 3}
	}
	return flows
}

type slowdowns struct{ small, medium, large, all []float64 }

func slowdownOf(t testing.TB, topo *Topology, cfg Config, flows []Flow, res []Result) slowdowns {
	var s slowdowns
	for i, r := range res {
		if r.Err != "" {
			t.Fatalf("flow %d: %s", r.ID, r.Err)
		}
		ideal, err := topo.IdealFCT(flows[i], cfg)
		if err != nil {
			t.Fatal(err)
		}
		sd := float64(r.End-r.Start) / float64(ideal)
		s.all = append(s.all, sd)
		switch b := flows[i].Bytes; {
		case b < 100_000:
			s.small = append(s.small, sd)
		case b < 1_000_000:
			s.medium = append(s.medium, sd)
		default:
			s.large = append(s.large, sd)
		}
	}
	return s
}

func stat(xs []float64) (mean, p99 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	sort.Float64s(xs)
	for _, x := range xs {
		mean += x
	}
	return mean / float64(len(xs)), xs[(len(xs)*99-1)/100]
}

// TestPapersSettingRunsAndSlowdownRisesWithLoad runs AliStorage and
// WebSearch on the papers' topology at 0.4 and 0.8 load (arrivals over a
// short window, every flow run to completion) and checks what must hold:
// every flow completes, no flow beats its ideal FCT, and FCT slowdown rises
// with load (the papers' ECMP curves all do).
func TestPapersSettingRunsAndSlowdownRisesWithLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("papers' setting")
	}
	topo, eps := papersSetting(t)
	cfg := DefaultConfig()
	for _, wl := range []struct {
		cdf string
		dur time.Duration
	}{{"alistorage2019", 300 * time.Microsecond}, {"websearch", 200 * time.Microsecond}} {
		var means [2]float64
		for i, load := range []float64{0.4, 0.8} {
			flows := workload(t, eps, wl.cdf, load, wl.dur)
			e := NewPacketEngine(topo, cfg)
			start := time.Now()
			res, err := e.Run(context.Background(), flows, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := slowdownOf(t, topo, cfg, flows, res)
			for _, x := range s.all {
				if x < 0.999 {
					t.Fatalf("%s %.1f: a flow beat its ideal FCT (slowdown %.3f)", wl.cdf, load, x)
				}
			}
			m, p := stat(s.all)
			ms, ps := stat(s.small)
			ml, pl := stat(s.large)
			means[i] = m
			t.Logf("%s load %.1f: %d flows, %d events in %v; slowdown all mean %.2f p99 %.2f; <100KB mean %.2f p99 %.2f; >=1MB mean %.2f p99 %.2f",
				wl.cdf, load, len(flows), e.Events(), time.Since(start).Round(time.Millisecond), m, p, ms, ps, ml, pl)
		}
		if means[1] <= means[0] {
			t.Errorf("%s: mean slowdown at 0.8 load (%.2f) should exceed 0.4's (%.2f)", wl.cdf, means[1], means[0])
		}
	}
}

// BenchmarkPapersWebSearch08 is the fabric-twin issue's speed target: the
// 128-host papers' setting with WebSearch at 0.8 load for 10 ms of
// simulated time (arrivals over the whole 10 ms; the run stops at 10 ms).
func BenchmarkPapersWebSearch08(b *testing.B) {
	topo, eps := papersSetting(b)
	flows := workload(b, eps, "websearch", 0.8, 10*time.Millisecond)
	cfg := DefaultConfig()
	cfg.MaxSimNs = 10_000_000
	benchPackets(b, topo, cfg, flows)
}

var papersLong = flag.Duration("papers", 0, "run TestPapersSteadyState with arrivals over this much simulated time (e.g. 5ms)")

// TestPapersSteadyState is the papers' setting over a longer arrival window,
// run on demand (go test -run PapersSteady -v ./emulator/fabric/ -args -papers=5ms):
// it takes minutes, and its table is recorded in docs/fabric-twin.md.
func TestPapersSteadyState(t *testing.T) {
	if *papersLong == 0 {
		t.Skip("on demand: -papers DURATION")
	}
	topo, eps := papersSetting(t)
	cfg := DefaultConfig()
	// The papers' loads are on the ToR uplinks (ConWeave's --netload); on
	// this 2:1 fabric a host offers half of it, as their generator does.
	t.Logf("| workload, uplink load (host load) | flows | mean slowdown | p99 | <100 KB mean / p99 | 100 KB-1 MB mean / p99 | >=1 MB mean / p99 | wall |")
	for _, cdf := range []string{"alistorage2019", "websearch"} {
		for _, netload := range []float64{0.4, 0.8} {
			load := netload / 2
			flows := workload(t, eps, cdf, load, *papersLong)
			e := NewPacketEngine(topo, cfg)
			start := time.Now()
			res, err := e.Run(context.Background(), flows, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := slowdownOf(t, topo, cfg, flows, res)
			m, p := stat(s.all)
			ms, ps := stat(s.small)
			mm, pm := stat(s.medium)
			ml, pl := stat(s.large)
			t.Logf("| %s %.1f (%.1f) | %d | %.2f | %.1f | %.2f / %.1f | %.2f / %.1f | %.2f / %.1f | %v |", cdf, netload, load, len(flows), m, p, ms, ps, mm, pm, ml, pl,
				time.Since(start).Round(time.Second))
		}
	}
}
