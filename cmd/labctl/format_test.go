package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/reports/capacity"
	"github.com/labctl/labctl/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/format")

// golden compares got with testdata/format/name (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "format", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update once)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// The run list prints as the golden table, Markdown and JSON (fields in
// a fixed order; a cell holding | stays in its Markdown column), and
// twice the same.
func TestRunsFormatsGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	list := []runEntry{
		{RunID: "incast-20261125-040000-ab12cd", Scenario: "incast", Outcome: "ok", Stage: "done", Started: at, Dir: "runs/incast-20261125-040000-ab12cd"},
		{RunID: "sweep-20261125-041000-9f8e7d", Scenario: "sweep", Outcome: "crashed", Stage: "traffic", Started: at.Add(10 * time.Minute),
			Dir: "runs/sweep-20261125-041000-9f8e7d", Note: "pid 4242 is gone | host ctl1"},
	}
	for _, format := range resultFormats {
		var a, b bytes.Buffer
		if err := writeRuns(&a, list, format); err != nil {
			t.Fatal(err)
		}
		if err := writeRuns(&b, list, format); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two prints of the same list differ", format)
		}
		golden(t, "runs."+format, a.Bytes())
	}
}

// capacity's answer prints as the golden JSON (keys sorted, < and > as
// they are) and Markdown (one row per measured load, the answer below).
func TestCapacityFormatsGolden(t *testing.T) {
	t.Parallel()
	v := func(f float64) *float64 { return &f }
	res := &capacity.Result{SLO: capacity.SLO{Metric: "slowdown.p99", Bucket: "<100KB", Op: "<=", Limit: 10},
		Best: 0.5, Found: true, FirstMiss: 0.7, Method: "grid", Steps: []capacity.Step{
			{Load: 0.3, Value: v(2.5), Meets: true, Ref: "runs/w-1"},
			{Load: 0.5, Value: v(7.25), Meets: true, Ref: "runs/w-2"},
			{Load: 0.7, Value: v(31), Meets: false, Ref: "runs/w-3"},
		}}
	for _, format := range []string{formatJSON, formatMD} {
		var b bytes.Buffer
		if err := printCapacity(&b, format, res, "runs/capacity-w-20261125"); err != nil {
			t.Fatal(err)
		}
		golden(t, "capacity."+format, b.Bytes())
	}
}

// A run's outcome prints as the golden Markdown: one row, the failed
// points and warnings below.
func TestRunOutcomeMarkdownGolden(t *testing.T) {
	t.Parallel()
	out := &scenarios.Outcome{RunID: "m-20261125-040000-ab12cd", Dir: "runs/m-20261125-040000-ab12cd", Outcome: "partial",
		Report: "runs/m-20261125-040000-ab12cd/report.html", Failed: []string{"lb=drill/load=0.8"}, Warnings: []string{"leaf1: 2 samples coalesced"}}
	var b bytes.Buffer
	if err := printOutcome(&b, formatMD, out); err != nil {
		t.Fatal(err)
	}
	golden(t, "run.md", b.Bytes())
}

// An unknown --format is a usage error (exit 2) naming the formats the
// command knows; --json and another --format exclude each other.
func TestUnknownFormatListsKnown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "--format", "xml"}, "known formats: table, json, md"},
		{[]string{"image", "schemes", "--format", "yaml"}, "known formats: table, json, md"},
		{[]string{"report", "r", "--format", "pdf"}, "known formats: table, json, md, html, csv"},
		{[]string{"lab", "status", "--json", "--format", "md"}, "exclude each other"},
	} {
		_, stderr, err := labctl(t, t.TempDir(), tc.args...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: %v, stderr %q; want exit 2 saying %q", tc.args, err, stderr, tc.want)
		}
	}
}

// Every printing verb that needs nothing running prints its result as
// JSON, Markdown and a table: image schemes, inventory show and validate,
// lab status (no lab up).
func TestFormatsOnVerbs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, args := range [][]string{
		{"image", "schemes"}, {"inventory", "show", "leafspine:1x2:2"}, {"inventory", "validate", "leafspine:1x2:2"}, {"lab", "status"},
	} {
		for _, format := range resultFormats {
			out, stderr, err := labctl(t, home, append(args, "--format", format)...)
			if err != nil {
				t.Errorf("%v --format %s: %v\n%s", args, format, err, stderr)
				continue
			}
			ok := map[string]bool{formatJSON: strings.HasPrefix(out, "{") || strings.HasPrefix(out, "["),
				formatMD: strings.Contains(out, "| --- |"), formatTable: out != "" && !strings.Contains(out, "| --- |")}[format]
			if !ok {
				t.Errorf("%v --format %s printed:\n%s", args, format, out)
			}
		}
	}
}
