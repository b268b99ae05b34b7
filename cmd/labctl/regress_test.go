package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegressOnRealRuns runs the same 3:1 incast (two repetitions) on a
// lab and on the same lab with the receiver's link throttled to 25 Gb/s,
// then checks the verdicts: a run against itself and against a promoted
// copy of itself passes; the throttled run fails, names the metrics and
// writes JUnit XML of the common shape.
func TestRegressOnRealRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an emulated lab")
	}
	home, out := t.TempDir(), t.TempDir()
	base := runDir(t, home, "run", "testdata/incast-3to1.yaml", "--lab", "testdata/lab-4hosts.yaml", "--out", out)
	throttled := runDir(t, home, "run", "testdata/incast-3to1.yaml", "--lab", "testdata/lab-4hosts-throttled.yaml", "--out", out)

	if stdout, _, err := labctl(t, home, "regress", "--baseline", base, "--candidate", base); err != nil || !strings.Contains(stdout, "no regression") {
		t.Fatalf("a run against itself: %v\n%s", err, stdout)
	}
	promoted, stderr, err := labctl(t, home, "regress", "promote", base, "--name", "nightly")
	if err != nil {
		t.Fatalf("promote: %v %s", err, stderr)
	}
	if !regexp.MustCompile(`^baseline nightly is now run \S+ \(` + regexp.QuoteMeta(base) + `\)\n$`).MatchString(promoted) {
		t.Errorf("promote's default output changed: %q", promoted)
	}
	promoted, stderr, err = labctl(t, home, "regress", "promote", base, "--name", "nightly", "--format", "json")
	if err != nil {
		t.Fatalf("promote --format json: %v %s", err, stderr)
	}
	p := jsonObject(t, "regress promote", promoted)
	hasFields(t, "regress promote", p, map[string]any{"name": "nightly", "run_dir": base, "run_id": filepath.Base(base), "promoted": nil})
	if _, _, err := labctl(t, home, "regress", "--baseline", "nightly", "--candidate", base); err != nil {
		t.Fatalf("against the promoted copy of itself: %v", err)
	}

	junit := filepath.Join(t.TempDir(), "regress.xml")
	stdout, _, err := labctl(t, home, "regress", "--baseline", "nightly", "--candidate", throttled, "--junit", junit)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("throttled link: want exit 1, got %v\n%s", err, stdout)
	}
	for _, want := range []string{"fct.mean", "goodput_gbps", "REGRESSED"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("verdict does not name %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		XMLName  xml.Name
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || suites.XMLName.Local != "testsuites" || len(suites.Suites) != 1 {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	failed := map[string]bool{}
	for _, c := range suites.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Name] = true
		}
	}
	if !failed["fct.mean"] || !failed["goodput_gbps"] || suites.Failures != len(failed) {
		t.Errorf("junit failures %v (root says %d)", failed, suites.Failures)
	}
	if failed["failed_flows"] {
		t.Error("no flow failed, yet failed_flows regressed")
	}
}

// runDir runs labctl run and returns the run directory it printed.
func runDir(t *testing.T, home string, args ...string) string {
	t.Helper()
	stdout, stderr, err := labctl(t, home, args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	var o struct {
		Dir string `json:"run_dir"`
	}
	if err := json.Unmarshal([]byte(stdout), &o); err != nil {
		t.Fatalf("run output %q: %v", stdout, err)
	}
	return o.Dir
}

// TestRegressAgainstAWorseScheme runs the same permutation on a 4-spine
// leaf-spine with DRILL and with ECMP, whose hash puts some flows on the
// same spine: the ECMP run, against the DRILL baseline, fails and names
// the metrics, comparing the two schemes by condition; the other way round
// it passes (ECMP is the worse one).
func TestRegressAgainstAWorseScheme(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an emulated lab")
	}
	home, out := t.TempDir(), t.TempDir()
	drill := runDir(t, home, "run", "testdata/perm-drill.yaml", "--out", out)
	ecmp := runDir(t, home, "run", "testdata/perm-ecmp.yaml", "--out", out)

	stdout, _, err := labctl(t, home, "regress", "--baseline", drill, "--candidate", ecmp)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("ecmp against a drill baseline: want exit 1, got %v\n%s", err, stdout)
	}
	for _, want := range []string{"point=perm: baseline scheme drill vs candidate scheme ecmp",
		"point=perm (drill -> ecmp): fct.mean", "point=perm (drill -> ecmp): fct.p99", "point=perm (drill -> ecmp): goodput_gbps", "REGRESSED"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("verdict lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "not compared") || strings.Contains(stdout, "has no value") {
		t.Errorf("a group went uncompared:\n%s", stdout)
	}
	if stdout, _, err := labctl(t, home, "regress", "--baseline", ecmp, "--candidate", drill); err != nil || !strings.Contains(stdout, "no regression") {
		t.Errorf("drill against an ecmp baseline: %v\n%s", err, stdout)
	}
}
