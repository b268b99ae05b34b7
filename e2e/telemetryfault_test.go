package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testinflux"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// onPoint calls start when a point starts (its 1-based index), before its
// traffic.
type onPoint struct{ start func(index int) }

func (onPoint) Stage(string, string) {}
func (o onPoint) Point(p scenarios.PointProgress) {
	if !p.Finished {
		o.start(p.Index)
	}
}
func (onPoint) Flows(string, int, int) {}

// faultScenario has six short workload points, so that a fault can start
// at one and end at another. RNIC counters are read before and after each
// point only (an rnic_interval longer than any point): how many polls
// fall within a point depends on the wall clock, which would make two
// runs' archives differ.
func faultScenario(t *testing.T) *scenarios.Scenario {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: telefault\ntelemetry: {interval: 100us, rnic_interval: 1h}\ntraffic:\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "  - {name: p%d, pattern: workload, cdf: websearch, load: 0.5, duration: 2ms, seed: %d}\n", i, i)
	}
	s, err := scenarios.Parse([]byte(b.String()), "telefault.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// archiveSamples is a run's telemetry archive without what depends on
// wall time, as a multiset: samples taken while no traffic ran (idle:
// the twin takes them on wall time, now and then), the run and lab tags,
// the time of RNIC reads (over SSH, on wall time) and of gaps (when the
// collector noticed). A switch sample's time is kept relative to its
// point's epoch (the twin samples on that grid).
func archiveSamples(t *testing.T, dir string, m reports.Manifest) map[string]int {
	t.Helper()
	type epoch struct {
		name string
		ns   int64
	}
	var epochs []epoch
	for _, p := range m.Points {
		epochs = append(epochs, epoch{p.Name, pointEpoch(t, dir, p.Name)})
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i].ns < epochs[j].ns })
	files, _ := filepath.Glob(filepath.Join(dir, "telemetry", "*.lp"))
	out := map[string]int{}
	for _, f := range files {
		err := collectors.ReadLPFile(f, func(p collectors.Point) error {
			if p.Idle() {
				return nil
			}
			tags := map[string]string{}
			for k, v := range p.Tags {
				if k != "run" && k != "lab" {
					tags[k] = v
				}
			}
			fields := map[string]any{}
			for k, v := range p.Fields {
				if !strings.HasSuffix(k, "_ns") {
					fields[k] = v
				}
			}
			when := ""
			if p.Measurement != collectors.MeasRNIC && p.Measurement != collectors.MeasEthtool && p.Measurement != collectors.MeasGap {
				ts, at := p.Time.UnixNano(), "before any point"
				for _, e := range epochs {
					if ts >= e.ns {
						at = fmt.Sprintf("%s+%d", e.name, ts-e.ns)
					}
				}
				when = at
			}
			out[fmt.Sprint(p.Measurement, tags, fields, when)]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// fieldValues counts a run's archived field values per measurement the
// way InfluxDB stores them: one per (measurement, tags, time, field), so
// two lines of one sample (a port's OpenConfig and COUNTERS_DB tables)
// merge, as they do there.
func fieldValues(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "telemetry", "*.lp"))
	seen := map[string]bool{}
	out := map[string]int64{}
	for _, f := range files {
		err := collectors.ReadLPFile(f, func(p collectors.Point) error {
			for k := range p.Fields {
				key := fmt.Sprint(p.Measurement, p.Tags, p.Time.UnixNano(), k)
				if !seen[key] {
					seen[key] = true
					out[p.Measurement]++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func diffSamples(t *testing.T, got, want map[string]int) {
	t.Helper()
	n := 0
	for k, w := range want {
		if got[k] != w && n < 5 {
			t.Errorf("sample %s: %d times, %d in the fault-free run", k, got[k], w)
			n++
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && n < 10 {
			t.Errorf("sample %s: %d times, not in the fault-free run", k, g)
			n++
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d distinct samples, %d in the fault-free run", len(got), len(want))
	}
}

func totalTelemetryPoints(s *reports.Summary) (n int) {
	for _, p := range s.Points {
		n += p.TelemetryPoints
	}
	return n
}

// InfluxDB killed for 10 s, and (separately) stopped with SIGSTOP for
// 10 s, while a run streams telemetry into it. The run is compared with
// the same scenario on a lab of the same seed without InfluxDB:
//   - the archive holds the same samples (timing-dependent parts left
//     out: see archiveSamples), and the report the same telemetry counts,
//     so nothing was lost and nothing counted twice (the spool is not
//     where the report reads);
//   - after the run (which replays the spool when InfluxDB is back and
//     at its end), InfluxDB holds exactly the archive's field values per
//     measurement;
//   - the outcome is degraded exactly when the manifest says telemetry is
//     missing (here: ok, with warnings naming the outage).
func TestInfluxOutageDuringARun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel) // the subtests run after this function returns
	inv, pool, agent, _ := emulatedLabWith(t, "leafspine:2x2:2", emulator.Options{Seed: 7})
	base, err := (&scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}).Run(ctx, faultScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	baseSamples := archiveSamples(t, base.Dir, readManifest(t, base.Dir))

	for _, tc := range testinflux.Outages() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			proc := testinflux.StartProcess(t)
			db := proc.Database(t)
			inv, pool, agent, _ := emulatedLabWith(t, "leafspine:2x2:2", emulator.Options{Seed: 7})
			var faultAt time.Time
			var once sync.Once
			prog := onPoint{start: func(i int) {
				switch i {
				case 2:
					faultAt = time.Now()
					tc.Fault(proc)
				case 5: // points 2-4 ran against a dead InfluxDB
					once.Do(func() {
						time.Sleep(time.Until(faultAt.Add(10 * time.Second)))
						tc.Recover(proc)
					})
				}
			}}
			r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, Progress: prog,
				Influx: &collectors.InfluxConfig{URL: db.URL, Bucket: db.Bucket}}
			out, err := r.Run(ctx, faultScenario(t))
			if err != nil {
				t.Fatal(err)
			}
			m := readManifest(t, out.Dir)
			st := m.Telemetry.Influx.Stats
			t.Logf("outcome %s, influx %+v", out.Outcome, st)
			if got := out.Outcome == scenarios.OutcomeDegraded; got != m.Telemetry.Incomplete() || m.Outcome != out.Outcome {
				t.Errorf("outcome %s (manifest %s) but telemetry incomplete = %v", out.Outcome, m.Outcome, m.Telemetry.Incomplete())
			}
			if out.Outcome != scenarios.OutcomeOK || st.Spooled == 0 || st.Replayed != st.Spooled || st.Pending != 0 || st.Lost != 0 {
				t.Errorf("outcome %s, influx %+v: want ok, every spooled point replayed", out.Outcome, st)
			}
			if len(st.Outages) == 0 || st.Outages[0].To.IsZero() {
				t.Errorf("outages %+v: want one that ended during the run", st.Outages)
			}
			if tc.Name == "stopped" && st.TimedOut == 0 {
				t.Errorf("a stopped InfluxDB timed out no write")
			}
			if !strings.Contains(strings.Join(m.Warnings, "\n"), "took no writes") {
				t.Errorf("no warning names the outage: %q", m.Warnings)
			}
			diffSamples(t, archiveSamples(t, out.Dir, m), baseSamples)
			if got, want := totalTelemetryPoints(out.Summary), totalTelemetryPoints(base.Summary); got != want {
				t.Errorf("report counts %d telemetry points, %d in the fault-free run", got, want)
			}
			if spool, _ := filepath.Glob(filepath.Join(out.Dir, "telemetry", "*")); len(spool) != len(mustGlob(t, base.Dir)) {
				t.Errorf("telemetry/ holds %v", spool)
			}
			for meas, n := range fieldValues(t, out.Dir) {
				if got := db.Count(t, meas); got != n {
					t.Errorf("InfluxDB holds %d %s values, the archive %d", got, meas, n)
				}
			}
		})
	}
}

func mustGlob(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "telemetry", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A switch's gNMI server restarts during a point's traffic: the gap is in
// the archive and the manifest, the run is degraded with a warning naming
// the device, its paths and the span, samples flow again within a second
// of the server being back, and --strict's error is what the CLI returns.
func TestGNMIRestartDuringARun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:2x2:2", emulator.Options{Seed: 7})
	const lead = 300 * time.Millisecond
	dev := inv.Switches[0].Name
	var back time.Time
	var restartErr error
	done := make(chan struct{})
	prog := onPoint{start: func(i int) {
		if i == 3 {
			go func() { // into the point's traffic
				defer close(done)
				time.Sleep(lead + 20*time.Millisecond)
				restartErr = lab.RestartGNMIFor(ctx, dev, 100*time.Millisecond)
				back = time.Now()
			}()
		}
	}}
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, Progress: prog, EpochLead: lead}
	out, err := r.Run(ctx, faultScenario(t))
	<-done
	if err != nil || restartErr != nil {
		t.Fatal(err, restartErr)
	}
	m := readManifest(t, out.Dir)
	if out.Outcome != scenarios.OutcomeDegraded || m.Outcome != scenarios.OutcomeDegraded || out.Summary.Outcome != scenarios.OutcomeDegraded {
		t.Fatalf("outcome %s (manifest %s, summary %s), want degraded", out.Outcome, m.Outcome, out.Summary.Outcome)
	}
	if m.Telemetry.GapCount == 0 || len(m.Telemetry.Gaps) != m.Telemetry.GapCount {
		t.Fatalf("gaps %+v", m.Telemetry)
	}
	var gaps []collectors.Gap
	if err := collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "collector_gap.lp"), func(p collectors.Point) error {
		gaps = append(gaps, collectors.GapOf(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(gaps) != m.Telemetry.GapCount {
		t.Errorf("%d gaps in the archive, %d in the manifest", len(gaps), m.Telemetry.GapCount)
	}
	broken := map[string]bool{}
	for _, g := range gaps {
		if g.Device != dev || !g.Until.After(g.Since) {
			t.Errorf("gap %+v", g)
		}
		if g.BrokeAt.IsZero() {
			// The target may flag samples coalesced just after it came
			// back (its cache's resend racing the next sample): kept as
			// it reported them.
			continue
		}
		broken[g.Target] = true
		if d := g.ResumedAt.Sub(back); d > time.Second {
			t.Errorf("gap %s: samples again %v after the server was back, want within 1s", g.Target, d)
		}
	}
	if len(broken) != 2 {
		t.Errorf("broken-stream gaps for targets %v, want the switch's own and COUNTERS_DB", broken)
	}
	t.Logf("warnings: %q", out.Summary.Warnings)
	warned := 0
	for _, w := range out.Summary.Warnings {
		if strings.Contains(w, "telemetry gap: device "+dev) && strings.Contains(w, " path ") && strings.Contains(w, " UTC ") {
			warned++
		}
	}
	if warned != len(gaps) {
		t.Errorf("%d gap warnings in the summary for %d gaps: %q", warned, len(gaps), out.Summary.Warnings)
	}
	html, err := os.ReadFile(out.Report)
	if err != nil || !strings.Contains(string(html), "outcome <b>degraded</b>") || !strings.Contains(string(html), "telemetry gap: device "+dev) {
		t.Errorf("report.html does not show the outcome and the gap (%v)", err)
	}
}
