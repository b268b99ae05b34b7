package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestEveryReportFieldIsCollected runs a small incast (7:1, lossless, on
// the packet engine, so PFC pauses) on the emulated lab and reads the
// run's archived telemetry: every field the schema marks as
// one the report shows (collectors.Schema, Field.Report; per-priority
// fields for every priority) must have at least one sample, so no report
// column is n/a because no collector produces its counter. The RNIC
// counters must also have been read during the traffic, not only before
// and after it, and the report's PFC table must give a paused time for
// every switch tier and for the hosts, above 0 where PAUSE was received.
func TestEveryReportFieldIsCollected(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	inv, pool, agentBin, _ := emulatedLabWith(t, "leafspine:1x2:4@100", emulator.Options{Seed: 1, Engine: "packet"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := runYAML(ctx, t, inv, pool, agentBin, `name: schema
telemetry: {interval: 100us, rnic_interval: 10ms}
traffic:
  - {name: incast, pattern: incast, senders: 7, receiver: h1, bytes: 8MiB}
`)
	run, err := reports.LoadRun(o.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	type rnicKey struct{ host, netdev string }
	seen := map[string]map[string]int{} // measurement → field → samples
	ethtoolReads := map[rnicKey]int{}
	err = run.Telemetry(func(p collectors.Point) error {
		if seen[p.Measurement] == nil {
			seen[p.Measurement] = map[string]int{}
		}
		for f := range p.Fields {
			seen[p.Measurement][f]++
		}
		if p.Measurement == collectors.MeasEthtool {
			ethtoolReads[rnicKey{p.Tags[collectors.TagHost], p.Tags[collectors.TagNetdev]}]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range collectors.Schema() {
		for _, f := range m.Fields {
			if !f.Report {
				continue
			}
			for _, n := range f.Names() {
				checked++
				if seen[m.Name][n] == 0 {
					t.Errorf("report field %s.%s: no collector produced a sample of it", m.Name, n)
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d report fields in the schema", checked)
	}
	if len(ethtoolReads) == 0 {
		t.Fatal("no RNIC was read with ethtool -S")
	}
	for k, n := range ethtoolReads {
		if n < 3 {
			t.Errorf("RNIC %s/%s: %d ethtool -S reads, want more than the two before and after the traffic", k.host, k.netdev, n)
		}
	}
	if len(o.Summary.Points) != 1 {
		t.Fatalf("%d points", len(o.Summary.Points))
	}
	tiers, paused := map[string]bool{}, false
	for _, tp := range o.Summary.Points[0].PFCByTier {
		t.Logf("tier %s: %d pause frames sent, %d received, paused %v µs", tp.Tier, tp.Tx, tp.Rx, deref(tp.PauseUs))
		tiers[tp.Tier] = true
		switch {
		case tp.PauseUs == nil:
			t.Errorf("tier %s: paused time n/a", tp.Tier)
		case tp.Rx > 0 && *tp.PauseUs == 0:
			t.Errorf("tier %s received %d pause frames and was never paused", tp.Tier, tp.Rx)
		case tp.Rx > 0:
			paused = true
		}
	}
	if !paused {
		t.Error("a 7:1 lossless incast paused no tier: the pause-time column shows nothing to check")
	}
	for _, want := range []string{reports.TierHost, "leaf", "spine"} {
		if !tiers[want] {
			t.Errorf("PFC table lacks tier %s: %+v", want, o.Summary.Points[0].PFCByTier)
		}
	}
}

func deref(p *uint64) any {
	if p == nil {
		return "n/a"
	}
	return *p
}

// TestRNICReadFailureIsAGap: a host whose RNIC counters cannot be read
// (here ethtool -S names a netdev the host lacks) is recorded as
// collector_gap points naming the host and the failure, for the reads
// before and after the traffic and for those polled during it, and the
// run is degraded, not silently short of counters.
func TestRNICReadFailureIsAGap(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	lab, pool, agentBin := emulatedLab(t, "leafspine:1x2:2")
	// The runner's inventory names a netdev the (emulated) host lacks.
	inv := *lab
	inv.Hosts = slices.Clone(lab.Hosts)
	h1 := &inv.Hosts[0]
	h1.RNICs = slices.Clone(h1.RNICs)
	h1.RNICs[0].Netdev = "ens9f9"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := runYAML(ctx, t, &inv, pool, agentBin, `name: schema-gap
telemetry: {interval: 100us, rnic_interval: 10ms}
traffic:
  - {name: incast, pattern: incast, senders: 3, receiver: `+h1.Name+`, bytes: 16MiB}
`)
	if o.Outcome != scenarios.OutcomeDegraded {
		t.Errorf("outcome %s, want %s", o.Outcome, scenarios.OutcomeDegraded)
	}
	run, err := reports.LoadRun(o.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	gaps, others := 0, 0
	err = run.Telemetry(func(p collectors.Point) error {
		if p.Measurement != collectors.MeasGap {
			if p.Measurement == collectors.MeasEthtool && p.Tags[collectors.TagHost] == h1.Name {
				return fmt.Errorf("an ethtool sample of %s, whose reads all fail: %v", h1.Name, p.Tags)
			}
			return nil
		}
		g := collectors.GapOf(p)
		if g.Host != h1.Name {
			others++
			return nil
		}
		gaps++
		if g.Device != h1.RNICs[0].Device || !strings.Contains(g.Reason, "ethtool -S ens9f9") {
			t.Errorf("gap %+v: want device %s and the failed command in the reason", g, h1.RNICs[0].Device)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if gaps < 3 || others > 0 {
		t.Errorf("%d gaps of host %s (want the reads before, during and after the traffic), %d of other hosts", gaps, h1.Name, others)
	}
}
