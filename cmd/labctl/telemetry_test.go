package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/internal/testinflux"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

func writeManifest(t *testing.T, dir string, m *reports.Manifest) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run degraded only by points left in its spool: `labctl telemetry
// replay` writes them to the run's InfluxDB, once however often it runs,
// and the run becomes ok with a note in place of the warning.
func TestTelemetryReplayWritesTheSpoolOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts influxd")
	}
	t.Parallel()
	srv := testinflux.Start(t)
	dir := t.TempDir()
	sp, err := collectors.OpenSpool(archive.Open(dir).Spool())
	if err != nil {
		t.Fatal(err)
	}
	var pts []collectors.Point
	for i := 0; i < 5; i++ {
		pts = append(pts, collectors.Point{Measurement: "port", Time: time.Unix(1700000000, int64(i)),
			Tags: map[string]string{"device": "leaf1"}, Fields: map[string]any{"tx_bytes": uint64(i)}})
	}
	if err := sp.Append(pts); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	writeManifest(t, dir, &reports.Manifest{RunID: "r1", Outcome: scenarios.OutcomeDegraded, Stage: "done",
		Warnings: []string{scenarios.UnreplayedPrefix + "5 points wait in the spool", "hosts started flows late"},
		Telemetry: &reports.TelemetryMeta{Influx: &reports.InfluxMeta{URL: srv.URL, Bucket: srv.Bucket, Spool: "spool/influx",
			Stats: collectors.InfluxStats{Spooled: 5, Pending: 5}}}})
	for i, want := range []string{"5 points written", "0 points written"} {
		stdout, stderr, err := labctl(t, t.TempDir(), "telemetry", "replay", dir)
		if err != nil || !strings.Contains(stdout, want) {
			t.Fatalf("replay %d: %v %q %q; want %q", i+1, err, stdout, stderr, want)
		}
	}
	if n := srv.Count(t, "port"); n != 5 {
		t.Errorf("InfluxDB holds %d points, want 5", n)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	var m reports.Manifest
	json.Unmarshal(b, &m)
	ws := strings.Join(m.Warnings, "\n")
	if m.Outcome != scenarios.OutcomeOK || m.Telemetry.Influx.Stats.Pending != 0 || m.Telemetry.Influx.Stats.Replayed != 5 ||
		strings.Contains(ws, scenarios.UnreplayedPrefix) || !strings.Contains(ws, "flows late") || !strings.Contains(ws, "telemetry replay at") {
		t.Errorf("manifest after the replay: outcome %s, %+v, warnings %q", m.Outcome, m.Telemetry.Influx.Stats, m.Warnings)
	}
}

// regress refuses a degraded run unless --strict=false.
func TestRegressStrictRefusesADegradedRun(t *testing.T) {
	t.Parallel()
	base, cand := t.TempDir(), t.TempDir()
	for dir, s := range map[string]reports.Summary{
		base: {RunID: "b", Outcome: scenarios.OutcomeOK},
		cand: {RunID: "c", Outcome: scenarios.OutcomeDegraded, Warnings: []string{"telemetry gap: device leaf1 target COUNTERS_DB"}},
	} {
		b, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, err := labctl(t, t.TempDir(), "regress", "--baseline", base, "--candidate", cand)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "candidate run c is degraded") ||
		!strings.Contains(stderr, "device leaf1") {
		t.Fatalf("want exit 1 naming the degraded run, got %v %q", err, stderr)
	}
	if _, stderr, err := labctl(t, t.TempDir(), "regress", "--strict=false", "--baseline", base, "--candidate", cand); strings.Contains(stderr, "degraded") {
		t.Errorf("--strict=false still refused: %v %q", err, stderr)
	}
}

// A run whose InfluxDB never answers keeps every point in its spool and
// ends degraded: `labctl run --strict` exits 1 after writing everything;
// `labctl telemetry replay` into a live InfluxDB then writes the archive's
// points there and makes the run ok.
func TestStrictRunDegradedUntilReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an emulated lab")
	}
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	home, out := t.TempDir(), t.TempDir()
	stdout, stderr, err := labctl(t, home, "run", "incast", "--out", out, "--lab", "leafspine:1x2:9@100",
		"--influx-url", dead, "--influx-bucket", "b", "--strict")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "degraded") {
		t.Fatalf("want exit 1 for a degraded run, got %v\n%s", err, stderr)
	}
	var o scenarios.Outcome
	if err := json.Unmarshal([]byte(stdout), &o); err != nil || o.Outcome != scenarios.OutcomeDegraded || o.Report == "" {
		t.Fatalf("run output %q: %v", stdout, err)
	}
	if !strings.Contains(strings.Join(o.Warnings, "\n"), scenarios.UnreplayedPrefix) {
		t.Errorf("warnings %q name no spooled points", o.Warnings)
	}
	srv := testinflux.Start(t)
	if stdout, stderr, err := labctl(t, home, "telemetry", "replay", o.Dir, "--influx-url", srv.URL, "--influx-bucket", srv.Bucket); err != nil {
		t.Fatalf("replay: %v\n%s%s", err, stdout, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(o.Dir, "manifest.json"))
	var m reports.Manifest
	json.Unmarshal(b, &m)
	sum, err := reports.ReadSummary(o.Dir)
	if err != nil || m.Outcome != scenarios.OutcomeOK || sum.Outcome != scenarios.OutcomeOK {
		t.Errorf("after the replay: manifest %s, summary %v (%v)", m.Outcome, sum, err)
	}
	lines := 0
	err = collectors.ReadLPFile(filepath.Join(o.Dir, "telemetry", "port.lp"), func(p collectors.Point) error {
		lines++
		return nil
	})
	if err != nil || lines == 0 {
		t.Fatalf("archive port.lp: %d lines, %v", lines, err)
	}
	if got := m.Telemetry.Influx.Stats.Replayed; got != m.Telemetry.Influx.Stats.Spooled || got == 0 {
		t.Errorf("replayed %d of %d spooled points", got, m.Telemetry.Influx.Stats.Spooled)
	}
}
