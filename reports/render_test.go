package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestMarkdownGolden(t *testing.T) {
	s := loadSynth(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "synth.md")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./reports -run Golden -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("markdown differs from %s (go test -update to accept):\n%s", golden, b.String())
	}
}

func TestWriteRunReports(t *testing.T) {
	dir := synthRun(t)
	if _, err := WriteRunReports(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	// One CDF plot (a run without a matrix: all points in one), and per
	// point the queue-depth and pause time series.
	if n := strings.Count(h, "<svg"); n != 5 || !strings.Contains(h, "FCT CDF") || !strings.Contains(h, "Queue depth, deepest queues: inc") {
		t.Errorf("want 5 SVG plots (the CDF, queue depth and PFC of each point), got %d", n)
	}
	for _, ext := range []string{"http://", "https://", "src=", "href=", "<script", "@import", "url(", "<?xml"} {
		if strings.Contains(h, ext) {
			t.Errorf("report.html refers to something outside itself: %s", ext)
		}
	}
	for _, table := range []string{"<h2>Points: flows</h2>", "<h2>Points: fabric</h2>", "<h2>FCT (µs) and slowdown by flow size</h2>", "<h2>Queue depth per switch queue",
		"<h2>PFC by switch tier</h2>", "<h2>All-reduce</h2>", "<h2>All-reduce steps</h2>"} {
		if !strings.Contains(h, table) {
			t.Errorf("report.html lacks %s", table)
		}
	}
	j, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ Points []map[string]json.RawMessage }
	if err := json.Unmarshal(j, &raw); err != nil || len(raw.Points) != 2 {
		t.Fatalf("summary.json: %v, %d points", err, len(raw.Points))
	}
	for _, key := range []string{"flows", "fct_ns", "goodput_gbps", "pfc_pause_frames", "peak_queue_bytes", "telemetry_points"} {
		if _, ok := raw.Points[0][key]; !ok {
			t.Errorf("summary.json point lacks %q", key)
		}
	}
	var fct map[string]float64
	if err := json.Unmarshal(raw.Points[0]["fct_ns"], &fct); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mean", "p50", "p95", "p99", "p999", "max"} {
		if _, ok := fct[k]; !ok {
			t.Errorf("fct_ns lacks %q", k)
		}
	}
	if !near(int64(fct["p99"]), 99*ms) {
		t.Errorf("fct_ns.p99 = %v", fct["p99"])
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestRender(t *testing.T) {
	dir := synthRun(t)
	s := loadSynth(t)
	var want bytes.Buffer
	WriteMarkdown(&want, s)
	for _, tc := range []struct{ format, contains string }{
		{"md", want.String()},
		{"json", `"busbw_gbps"`},
		{"html", "<svg"},
		{"csv", "run,point,pattern,scheme"},
	} {
		var b bytes.Buffer
		if err := Render(dir, tc.format, &b); err != nil || !strings.Contains(b.String(), tc.contains) {
			t.Errorf("%s: err %v; output lacks %.40q", tc.format, err, tc.contains)
		}
	}
	if err := Render(dir, "pdf", &bytes.Buffer{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestSlowdownDefinitionNearEverySlowdown: every Markdown section and HTML
// heading whose text states a slowdown carries its definition (the ideal
// FCT includes the base round trip), and the slowdown plot's axis says so.
func TestSlowdownDefinitionNearEverySlowdown(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	sections := strings.Split(md.String(), "\n## ")
	stated := 0
	for _, sec := range sections[1:] {
		if !strings.Contains(strings.ToLower(sec), "slowdown") {
			continue
		}
		stated++
		if !strings.Contains(sec, SlowdownNote) || !strings.Contains(SlowdownNote, "ideal FCT includes the base round trip") {
			t.Errorf("section %q states a slowdown without its definition", strings.SplitN(sec, "\n", 2)[0])
		}
	}
	if stated < 4 { // against the baseline, points, by size, groups, comparisons
		t.Errorf("%d sections state a slowdown, want the matrix report's 5", stated)
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, s); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	if n, m := strings.Count(h, "ideal FCT includes the base round trip"), stated; n < m+1 {
		t.Errorf("HTML states the definition %d times, want one per slowdown section (%d) and the slowdown plot", n, m)
	}
}
