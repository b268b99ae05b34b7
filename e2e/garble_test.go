package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/scenarios"
)

// A switch whose COUNTERS_DB reads "N/A" for a PFC counter (lab fault
// garble-gnmi) during a run: the run ends degraded, with one gap per port
// (its samples in a row without the value, counted and named), all the
// switch's, summed up in one warning; the other switches' samples are
// whole, and report.html shows the outcome and the warning.
func TestGarbledCountersDuringARun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:2x2:2", emulator.Options{Seed: 3})
	dev := inv.Switches[0].Name
	from := time.Now() // the idle samples before it are whole; the collector gets the last as its first
	if err := lab.GarbleGNMI(dev, time.Hour); err != nil {
		t.Fatal(err)
	}
	out := runYAML(ctx, t, inv, pool, agent, `name: garble
telemetry: {interval: 100us, rnic_interval: 1h}
traffic:
  - {name: p1, pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, seed: 1}
`)
	m := readManifest(t, out.Dir)
	if out.Outcome != scenarios.OutcomeDegraded || m.Outcome != scenarios.OutcomeDegraded || m.Telemetry.GapCount == 0 {
		t.Fatalf("outcome %s (manifest %s), %d gaps; want degraded with gaps", out.Outcome, m.Outcome, m.Telemetry.GapCount)
	}
	leaf := collectors.PrioName(collectors.SAIPFCRxPkts, 3)
	gaps, samples := 0, uint64(0)
	if err := collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "collector_gap.lp"), func(p collectors.Point) error {
		g := collectors.GapOf(p)
		gaps++
		samples += g.UnreadableSamples
		if g.Device != dev || g.Target != collectors.CountersDB || g.Unreadable != g.UnreadableSamples || g.UnreadableSamples < 2 || g.Until.Before(g.Since) ||
			!strings.Contains(g.Reason, leaf) || !strings.Contains(g.Reason, `"N/A"`) || !strings.HasPrefix(g.Path, collectors.CountersDB+":/COUNTERS/") {
			t.Errorf("gap %+v", g)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// One gap per port: the fault lasts the whole run, so does each port's run of samples.
	if ports := len(inv.Switches[0].Ports); gaps != ports || gaps != m.Telemetry.GapCount || m.Telemetry.UnreadableValues != int64(samples) || m.Telemetry.MissedSamples != 0 {
		t.Errorf("%d gaps in the archive for %d ports (%d samples); the manifest's: %d gaps, %d values unreadable, %d samples missed",
			gaps, ports, samples, m.Telemetry.GapCount, m.Telemetry.UnreadableValues, m.Telemetry.MissedSamples)
	}
	// One warning for them all, not one per port.
	t.Logf("warnings: %q", out.Summary.Warnings)
	if g := m.Telemetry.Gaps; len(g) != 1 || g[0].Gaps != gaps || g[0].Unreadable != int64(samples) || g[0].Device != dev {
		t.Errorf("the manifest's gaps %+v, want one entry standing for all %d", g, gaps)
	}
	if w := out.Summary.Warnings; len(w) != 2 || !strings.Contains(w[0], fmt.Sprintf("device %s target %s: %d samples of %d keys", dev, collectors.CountersDB, samples, gaps)) ||
		!strings.Contains(w[1], fmt.Sprintf("%d counter values unreadable", samples)) {
		t.Errorf("warnings %q, want the gaps' summary and the count", w)
	}
	whole := 0
	if err := collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "port.lp"), func(p collectors.Point) error {
		_, rx := p.Fields["pfc3_rx"]
		_, tx := p.Fields["pfc3_tx"]
		switch {
		case p.Tags[collectors.TagDevice] == dev && rx && !p.Time.Before(from):
			t.Errorf("%s's sample has pfc3_rx %v while garbled: %+v", dev, p.Fields["pfc3_rx"], p)
		case p.Tags[collectors.TagDevice] != dev && tx && !rx:
			t.Errorf("%s's sample lacks pfc3_rx: %+v", p.Tags[collectors.TagDevice], p)
		case p.Tags[collectors.TagDevice] != dev && rx:
			whole++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if whole == 0 {
		t.Error("no whole PFC sample from the other switches")
	}
	html, err := os.ReadFile(out.Report)
	if err != nil || !strings.Contains(string(html), "outcome <b>degraded</b>") || !strings.Contains(string(html), "samples of ") {
		t.Errorf("report.html does not show the outcome and the unreadable value (%v)", err)
	}
}
