package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/perftest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const t0 = int64(1_700_000_000_000_000_000)

// synthRun writes an archive: an incast point of 100 flows with FCTs of
// 1..100 ms, one failed flow, and an all-reduce point of 4 hosts.
func synthRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{RunID: "r1", Scenario: "synth", Outcome: "ok", Points: []PointMeta{
		{Name: "inc", Pattern: "incast", Hosts: 101, Flows: 101, StartNs: t0, EndNs: t0 + 100_000_000, TelemetryIntervalNs: 1000},
		{Name: "ar", Pattern: "allreduce", Hosts: 4, Flows: 24, BufferBytes: 64 << 20, StartNs: t0 + 200_000_000, EndNs: t0 + 206_000_000},
	}}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
	var recs []perftest.FlowRecord
	for i := 1; i <= 100; i++ {
		size := int64(1 << 20)
		if i <= 30 {
			size = 50_000
		}
		recs = append(recs, perftest.FlowRecord{FlowID: i, Src: "h", Dst: "r", Bytes: size, StartNs: t0, EndNs: t0 + int64(i)*1_000_000, Status: perftest.StatusOK, Tool: "ib_write_bw"})
	}
	recs = append(recs, perftest.FlowRecord{FlowID: 101, Src: "h", Dst: "r", Bytes: 1, Status: perftest.StatusFailed, Tool: "ib_write_bw"})
	var ar []perftest.FlowRecord
	for step := 0; step < 6; step++ {
		for h := 0; h < 4; h++ {
			s := t0 + 200_000_000 + int64(step)*1_000_000
			ar = append(ar, perftest.FlowRecord{FlowID: step*4 + h, Src: "a", Dst: "b", Bytes: 16 << 20, StartNs: s, EndNs: s + 1_000_000, Status: perftest.StatusOK, Step: step})
		}
	}
	var csv bytes.Buffer
	WriteFlowsHeader(&csv)
	WriteFlowsCSV(&csv, "r1", "inc", recs)
	WriteFlowsCSV(&csv, "r1", "ar", ar)
	os.WriteFile(filepath.Join(dir, "flows.csv"), csv.Bytes(), 0o644)

	sink, _ := collectors.NewArchiveSink(filepath.Join(dir, "telemetry"))
	pt := func(meas string, ts int64, tags map[string]string, f map[string]any) collectors.Point {
		return collectors.Point{Measurement: meas, Time: time.Unix(0, ts), Tags: tags, Fields: f}
	}
	port := map[string]string{"device": "leaf1", "port": "1/0"}
	q := map[string]string{"device": "leaf1", "port": "1/0", "queue": "3"}
	sink.Write(context.Background(), []collectors.Point{
		pt("port", t0-50_000_000, port, map[string]any{"pfc3_tx": uint64(40)}), // before: the baseline
		pt("port", t0+10_000_000, port, map[string]any{"pfc3_tx": uint64(45)}),
		pt("port", t0+100_000_000, port, map[string]any{"pfc3_tx": uint64(52)}),
		pt("port", t0+150_000_000, port, map[string]any{"pfc3_tx": uint64(90)}), // after the window
		pt("queue", t0+50_000_000, q, map[string]any{"depth_bytes": uint64(400 << 10)}),
		pt("queue", t0+150_000_000, q, map[string]any{"depth_bytes": uint64(900 << 10)}), // after the window
	})
	sink.Close(context.Background())
	return dir
}

func TestAnalyse(t *testing.T) {
	s, err := Analyse(synthRun(t))
	if err != nil {
		t.Fatal(err)
	}
	inc := s.Points[0]
	if inc.Flows != 101 || inc.Failed != 1 {
		t.Errorf("flows %d failed %d", inc.Flows, inc.Failed)
	}
	ms := int64(1_000_000)
	if f := inc.FCT; f.P50 != 50*ms || f.P99 != 99*ms || f.Max != 100*ms || f.Mean != 50.5e6 || f.P95 != 95*ms {
		t.Errorf("FCT %+v", f)
	}
	if len(inc.BySize) != 2 || inc.BySize[0].Bucket != "<100KB" || inc.BySize[0].Flows != 30 || inc.BySize[1].Bucket != ">=1MB" {
		t.Errorf("buckets %+v", inc.BySize)
	}
	wantGoodput := float64(30*50_000+70<<20) * 8 / 100e6
	if inc.GoodputGbps != wantGoodput {
		t.Errorf("goodput %v want %v", inc.GoodputGbps, wantGoodput)
	}
	if inc.PFCPauseFrames != 12 {
		t.Errorf("PFC frames in window %d, want 52-40=12 (samples outside the window excluded)", inc.PFCPauseFrames)
	}
	if inc.PeakQueueBytes != 400<<10 || inc.PeakQueues[0].Device != "leaf1" {
		t.Errorf("peak queue %d %+v", inc.PeakQueueBytes, inc.PeakQueues)
	}
	if inc.TelemetryPoints != 3 {
		t.Errorf("telemetry points in window %d, want 3", inc.TelemetryPoints)
	}
	a := s.Points[1].AllReduce
	if a == nil || len(a.Steps) != 6 || a.TotalNs != 6*ms {
		t.Fatalf("allreduce %+v", a)
	}
	alg := float64(64<<20) * 8 / float64(6*ms)
	if a.AlgBWGbps != alg || a.BusBWGbps != alg*2*3/4 {
		t.Errorf("algbw %v busbw %v, want %v and %v", a.AlgBWGbps, a.BusBWGbps, alg, alg*1.5)
	}
}

func TestMarkdownGolden(t *testing.T) {
	s, _ := Analyse(synthRun(t))
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/synth.md"
	if *update {
		os.WriteFile(golden, b.Bytes(), 0o644)
	}
	want, _ := os.ReadFile(golden)
	if b.String() != string(want) {
		t.Fatalf("markdown differs from %s (go test -update to accept):\n%s", golden, b.String())
	}
}

func TestHTMLSelfContained(t *testing.T) {
	dir := synthRun(t)
	if _, err := WriteRunReports(dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	h := string(b)
	if strings.Count(h, "<polyline") != 2 || !strings.Contains(h, "<svg") {
		t.Error("want an SVG CDF with one line per point")
	}
	for _, ext := range []string{"src=", "href=", "<script", "@import"} {
		if strings.Contains(h, ext) {
			t.Errorf("report.html refers to something outside itself: %s", ext)
		}
	}
	var s Summary
	j, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(j, &s); err != nil || s.Points[0].Flows != 101 {
		t.Fatalf("summary.json: %v", err)
	}
	for _, key := range []string{`"flows"`, `"fct_ns"`, `"p50"`, `"p99"`, `"max"`, `"mean"`, `"goodput_gbps"`, `"pfc_pause_frames"`, `"peak_queue_bytes"`, `"telemetry_points"`} {
		if !strings.Contains(string(j), key) {
			t.Errorf("summary.json lacks %s", key)
		}
	}
}

func FuzzReadFlowsCSV(f *testing.F) {
	var b bytes.Buffer
	WriteFlowsHeader(&b)
	WriteFlowsCSV(&b, "r", "p", []perftest.FlowRecord{{FlowID: 1, Src: "a", Dst: "b", Bytes: 10, StartNs: 1, EndNs: 5, Status: "ok"}})
	f.Add(b.String())
	f.Fuzz(func(t *testing.T, s string) {
		_ = ReadFlowsCSV(strings.NewReader(s), func(FlowRow) error { return nil })
	})
}
