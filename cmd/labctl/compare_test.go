package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/reports"
)

// writeArchive writes a one-point run archive whose 20 flows of 50 KB and
// 2 MB all take fctUs microseconds.
func writeArchive(t *testing.T, id, scheme string, fctUs int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := reports.Manifest{RunID: id, Scenario: "lb", Outcome: "ok", Points: []reports.PointMeta{{Name: scheme + "/load0.8", Pattern: "workload",
		Params: map[string]any{reports.ParamScheme: scheme, reports.ParamLoad: 0.8}, Status: reports.StatusOK, StartNs: 1, EndNs: 1 + fctUs*1000}}}
	b, _ := json.Marshal(m)
	var recs []perftest.FlowRecord
	for i := range 20 {
		size := int64(50_000)
		if i%2 == 1 {
			size = 2_000_000
		}
		recs = append(recs, perftest.FlowRecord{FlowID: i, Src: "h1", Dst: "h2", Bytes: size, StartNs: 1, EndNs: 1 + fctUs*1000, Status: perftest.StatusOK})
	}
	var csv bytes.Buffer
	if err := reports.WriteFlowsHeader(&csv); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteFlowsCSV(&csv, id, scheme+"/load0.8", recs); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"manifest.json": b, "flows.csv": csv.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompareCommand(t *testing.T) {
	ecmp, drill := writeArchive(t, "r-ecmp", "ecmp", 100), writeArchive(t, "r-drill", "drill", 80)
	home := t.TempDir()
	md, stderr, err := labctl(t, home, "compare", ecmp, drill)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	for _, want := range []string{"# Comparison of runs r-ecmp, r-drill", "- drill reduces avg FCT by 20.0% vs ecmp at load 0.8"} {
		if !strings.Contains(md, want) {
			t.Errorf("compare md lacks %q:\n%s", want, md)
		}
	}
	// Buckets, baseline, CSV to a file.
	out := filepath.Join(t.TempDir(), "cmp.csv")
	if _, stderr, err := labctl(t, home, "compare", ecmp, drill, "--format", "csv", "--buckets", "1MB", "--baseline-scheme", "drill", "--out", out); err != nil {
		t.Fatalf("compare csv: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(b), "\n"); rows != 1+2*3 || !strings.Contains(string(b), ",<1MB,10,") {
		t.Errorf("csv: want a header and 3 rows (all, <1MB, >=1MB) per point:\n%s", b)
	}
	js, _, err := labctl(t, home, "compare", ecmp, drill, "--format", "json", "--baseline-scheme", "drill")
	if err != nil {
		t.Fatal(err)
	}
	var s reports.Summary
	if err := json.Unmarshal([]byte(js), &s); err != nil || s.Baseline != "drill" || len(s.Comparisons) == 0 ||
		s.Comparisons[0].Sentence != "ecmp increases avg FCT by 25.0% vs drill at load 0.8 [n=1 vs 1]" {
		t.Errorf("json: %v %+v", err, s.Comparisons)
	}
	// A baseline scheme no point has is a mistake, not a silent ecmp.
	if _, stderr, err := labctl(t, home, "compare", ecmp, drill, "--baseline-scheme", "dril"); err == nil ||
		!strings.Contains(stderr, `baseline scheme "dril"`) || !strings.Contains(stderr, "the schemes are drill, ecmp") {
		t.Errorf("mistyped --baseline-scheme: %v\n%s", err, stderr)
	}
	for _, bad := range [][]string{{"compare"}, {"compare", ecmp, "--buckets", "1MB,10KB"}, {"report", ecmp, "--format", "pdf"},
		{"report", ecmp, "--baseline-scheme", "dril"}} {
		_, stderr, err := labctl(t, home, bad...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: want exit 2, got %v (%s)", bad, err, stderr)
		}
	}
}
