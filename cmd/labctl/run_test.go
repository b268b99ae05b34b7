package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPartialRunExitsNonZeroAfterTheReport: a matrix with one variant that
// cannot run still writes the report of the others, prints its JSON line
// with outcome "partial", and exits 1.
func TestPartialRunExitsNonZeroAfterTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "m.yaml")
	os.WriteFile(sc, []byte(`name: partial
traffic:
  - {name: w, pattern: workload, cdf: websearch, load: 0.3, duration: 200us}
matrix:
  - path: traffic[0].duration   # a 1ns window holds no flow: that point fails at planning
    values: [200us, 1ns, 300us]
`), 0o644)
	stdout, stderr, err := labctl(t, t.TempDir(), "run", sc, "--lab", "leafspine:1x2:3@100", "--out", t.TempDir())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v\n%s", err, stderr)
	}
	var out struct {
		Outcome string   `json:"outcome"`
		Report  string   `json:"report"`
		Failed  []string `json:"failed_points"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if out.Outcome != "partial" || len(out.Failed) != 1 || out.Failed[0] != "w/duration=1ns" {
		t.Errorf("%+v", out)
	}
	if _, err := os.Stat(out.Report); err != nil {
		t.Errorf("no report: %v", err)
	}
	if !strings.Contains(stderr, "1 of 3 points failed: w/duration=1ns") {
		t.Errorf("stderr does not say which point failed: %s", stderr)
	}
	// --lab and a matrix over lab contradict each other.
	os.WriteFile(sc, []byte("name: l\ntraffic:\n  - {pattern: incast, senders: 1, bytes: 1KiB}\nmatrix:\n  - {path: lab, values: [\"leafspine:1x2:2@100\"]}\n"), 0o644)
	if _, stderr, err := labctl(t, t.TempDir(), "run", sc, "--lab", "leafspine:1x2:2@100"); err == nil || !strings.Contains(stderr, "sweeps lab") {
		t.Errorf("want a usage error, got %v: %s", err, stderr)
	}
}
