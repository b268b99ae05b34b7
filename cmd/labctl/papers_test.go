package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labctl/labctl/archive"
)

// labctl papers --quick, restricted to Reunion's s sweep, runs it on the
// emulated lab and writes a report whose claim rows carry the twin's
// numbers and a verdict; --reuse then rebuilds the same report from the
// archive without running.
func TestPapersQuickWritesClaimsWithNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario on an emulated 64-host lab")
	}
	t.Parallel()
	dir := t.TempDir()
	out, runs := filepath.Join(dir, "papers.md"), filepath.Join(dir, "runs")
	_, stderr, err := labctl(t, t.TempDir(), "papers", "--quick", "--only", "reunion-s", "--runs", runs, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`mode: quick \(reduced scale\)`),
		regexp.MustCompile(`indicative only`),
		regexp.MustCompile("\\| `papers/reunion-s` \\| (reunion-s-quick-[0-9a-f-]+) \\| 5 \\| [0-9ms]+ \\| "),
		regexp.MustCompile("\\| `papers/gemma` \\| not run \\|"),
		// the claim row: paper figure, the twin's change for each s, a verdict
		regexp.MustCompile(`\| 0.75: tail FCT below ECMP's at every s \| -61.9 % to -64.7 %[^|]*\| reunion-s25: [-+][0-9.]+ % \([0-9.]+ ms against [0-9.]+ ms\); reunion-s50: [^|]*reunion-s250: [-+][0-9.]+ % [^|]*\| (yes|no[^|]*) \|`),
		// a table of the twin's figures with numbers where the cut ran, n/a where it did not
		regexp.MustCompile(`\| max FCT \| [0-9.]+ ms \| [0-9.]+ ms \| [0-9.]+ ms \| [0-9.]+ ms \| [0-9.]+ ms \|`),
		regexp.MustCompile(`\| high load: vs ECMP \| -44.9 % \|  \| n/a: not run \|`),
	} {
		if !want.MatchString(md) {
			t.Errorf("report lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", md)
	}
	runID := regexp.MustCompile(`reunion-s-quick-[0-9]{8}-[0-9]{6}-[0-9a-f]+`).FindString(md)
	// a later archive that failed is passed over
	failed := filepath.Join(runs, "reunion-s-quick-29991231-000000-000000")
	if err := os.MkdirAll(failed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(failed, "manifest.json"), []byte(`{"run_id":"reunion-s-quick-29991231-000000-000000","outcome":"failed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "again.md")
	if _, stderr, err := labctl(t, t.TempDir(), "papers", "--quick", "--only", "papers/reunion-s", "--reuse", "--runs", runs, "--out", out2); err != nil {
		t.Fatalf("--reuse: %v\n%s", err, stderr)
	}
	b2, _ := os.ReadFile(out2)
	claim := regexp.MustCompile(`\| 0.75: tail FCT[^\n]*`)
	if !strings.Contains(string(b2), runID+" | 5 | ") || !strings.Contains(string(b2), "(an earlier run)") || claim.FindString(string(b2)) != claim.FindString(md) {
		t.Errorf("--reuse did not rebuild the report from run %s:\n%s", runID, b2)
	}
	// an archive kept without its flows and telemetry (manifest and
	// summary.json only) gives the summary it holds
	kept := archive.Open(filepath.Join(runs, runID))
	if err := os.Remove(kept.Flows()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(kept.Telemetry()); err != nil {
		t.Fatal(err)
	}
	out3 := filepath.Join(dir, "kept.md")
	if _, stderr, err := labctl(t, t.TempDir(), "papers", "--quick", "--only", "reunion-s", "--reuse", "--runs", runs, "--out", out3); err != nil {
		t.Fatalf("--reuse of a kept archive: %v\n%s", err, stderr)
	}
	b3, _ := os.ReadFile(out3)
	if !strings.Contains(string(b3), runID+" | 5 | ") || claim.FindString(string(b3)) != claim.FindString(md) {
		t.Errorf("--reuse did not rebuild the report from the summary kept in run %s:\n%s", runID, b3)
	}
}

func TestPapersRefusesUnknownScenario(t *testing.T) {
	t.Parallel()
	_, stderr, err := labctl(t, t.TempDir(), "papers", "--only", "nosuch", "--out", "-")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr, "papers/reunion-s") {
		t.Errorf("want exit 2 listing the scenarios, got %v: %s", err, stderr)
	}
}
