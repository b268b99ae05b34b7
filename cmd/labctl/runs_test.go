package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/reports"
)

// TestRunsMarksCrashed: labctl runs lists a "running" run whose process is
// gone (or whose pid now runs another process) as crashed at the stage it
// reached, one whose process lives (this test's) as running, and finished
// runs with their outcome whatever their pid.
func TestRunsMarksCrashed(t *testing.T) {
	t.Parallel()
	host, self, start := lease.Self()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	out := t.TempDir()
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for i, m := range []reports.Manifest{
		{RunID: "r-dead", Scenario: "incast", Outcome: "running", Stage: "traffic", Host: host, PID: deadPID},
		{RunID: "r-recycled", Scenario: "incast", Outcome: "running", Stage: "telemetry", Host: host, PID: self, PIDStart: start + 1},
		{RunID: "r-live", Scenario: "burst", Outcome: "running", Stage: "provision", Host: host, PID: self, PIDStart: start},
		{RunID: "r-ok", Scenario: "burst", Outcome: "ok", Stage: "done", Host: host, PID: deadPID},
		{RunID: "r-failed", Scenario: "allreduce", Outcome: "failed", Stage: "preflight", Host: host, PID: deadPID},
	} {
		m.Started = t0.Add(time.Duration(i) * time.Minute)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(out, m.RunID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js, stderr, err := labctl(t, t.TempDir(), "runs", "--out", out, "--format", "json")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var got []runEntry
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, outcome, stage string }{
		{"r-dead", "crashed", "traffic"},
		{"r-recycled", "crashed", "telemetry"},
		{"r-live", "running", "provision"},
		{"r-ok", "ok", "done"},
		{"r-failed", "failed", "preflight"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs listed, want %d:\n%s", len(got), len(want), js)
	}
	for i, w := range want {
		if g := got[i]; g.RunID != w.id || g.Outcome != w.outcome || g.Stage != w.stage {
			t.Errorf("run %d: %s %s at %s, want %s %s at %s", i, g.RunID, g.Outcome, g.Stage, w.id, w.outcome, w.stage)
		}
	}
	if !strings.Contains(got[1].Note, "another process") {
		t.Errorf("recycled pid note %q", got[1].Note)
	}
	table, _, err := labctl(t, t.TempDir(), "runs", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 6 || !strings.Contains(lines[1], "r-dead") || !strings.Contains(lines[1], "crashed") {
		t.Errorf("table:\n%s", table)
	}
	if _, _, err := labctl(t, t.TempDir(), "runs", "--out", out, "--format", "xml"); err == nil {
		t.Error("--format xml accepted")
	}
}
