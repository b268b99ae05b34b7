package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestMarkdownGolden(t *testing.T) {
	s, _ := loadSynth(t)
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
	if strings.Count(h, "<svg") != 1 || strings.Count(h, "<polyline") != 2 {
		t.Errorf("want one SVG with one CDF line per point; %d svg, %d polylines", strings.Count(h, "<svg"), strings.Count(h, "<polyline"))
	}
	for _, ext := range []string{"http://", "https://", "src=", "href=", "<script", "@import", "url("} {
		if strings.Contains(h, ext) {
			t.Errorf("report.html refers to something outside itself: %s", ext)
		}
	}
	for _, table := range []string{"<h2>Points</h2>", "<h2>FCT by flow size (µs)</h2>", "<h2>Peak queue depth", "<h2>All-reduce</h2>", "<h2>All-reduce steps</h2>"} {
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
	if fct["p99"] != float64(99*ms) {
		t.Errorf("fct_ns.p99 = %v", fct["p99"])
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestRender(t *testing.T) {
	dir := synthRun(t)
	s, _ := loadSynth(t)
	var want bytes.Buffer
	WriteMarkdown(&want, s)
	for _, tc := range []struct{ format, contains string }{
		{"md", want.String()},
		{"json", `"busbw_gbps"`},
		{"html", "<polyline"},
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

func TestCDFSVGScale(t *testing.T) {
	line := func(name string, ns ...int64) CDF {
		c := CDF{Point: name}
		for i, v := range ns {
			c.Points = append(c.Points, CDFPoint{FCTNs: v, Frac: float64(i+1) / float64(len(ns))})
		}
		return c
	}
	tick := regexp.MustCompile(`text-anchor="middle">([0-9.]+)</text>`)
	for _, tc := range []struct {
		name      string
		cdfs      []CDF
		scale     string
		wantTicks []string
	}{
		{"one decade is linear", []CDF{line("a", 10_000, 50_000, 90_000)}, "linear", []string{"20", "40", "60", "80"}},
		{"three decades are log", []CDF{line("a", 1_000, 2_000), line("b<&>", 900_000, 1_000_000)}, "log scale", []string{"1", "10", "100", "1000"}},
		{"2.1 decades add 2x and 5x", []CDF{line("a", 150_000, 20_000_000)}, "log scale", []string{"200", "500", "1000", "2000", "5000", "10000", "20000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg := cdfSVG(tc.cdfs)
			if !strings.Contains(svg, "FCT (µs, "+tc.scale+")") {
				t.Errorf("axis is not %s", tc.scale)
			}
			var got []string
			for _, m := range tick.FindAllStringSubmatch(svg, -1) {
				got = append(got, m[1])
			}
			if strings.Join(got, " ") != strings.Join(tc.wantTicks, " ") {
				t.Errorf("ticks %v want %v", got, tc.wantTicks)
			}
			if strings.Count(svg, "<polyline") != len(tc.cdfs) || strings.Contains(svg, "b<&>") {
				t.Errorf("want %d lines and escaped names:\n%s", len(tc.cdfs), svg)
			}
		})
	}
	if s := cdfSVG([]CDF{{Point: "empty"}}); strings.Contains(s, "<svg") {
		t.Error("no flows should give no plot")
	}
}
