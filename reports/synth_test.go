package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/perftest"
)

const (
	t0 = int64(1_700_000_000_000_000_000)
	ms = int64(1_000_000)
)

// lpWriter writes line protocol by hand, so the archive under test does
// not depend on the encoder of the package that also reads it.
type lpWriter struct {
	t     *testing.T
	files map[string]*strings.Builder
}

func (w *lpWriter) add(meas, tags string, ts int64, fields string) {
	if w.files == nil {
		w.files = map[string]*strings.Builder{}
	}
	if w.files[meas] == nil {
		w.files[meas] = &strings.Builder{}
	}
	fmt.Fprintf(w.files[meas], "%s,lab=lab1,run=r1,%s %s %d\n", meas, tags, fields, ts)
}

func (w *lpWriter) save(dir string) {
	for meas, b := range w.files {
		putFile(w.t, filepath.Join(dir, "telemetry", meas+".lp"), b.String())
	}
}

func putFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Sizes of the incast's 100 completed flows: 30 small, 40 medium, 30 large.
func incastSize(i int) int64 {
	switch {
	case i <= 30:
		return 50_000
	case i <= 70:
		return 500_000
	}
	return 2_000_000
}

// synthRun writes an archive with two points:
//   - "inc", an incast in [t0, t0+100ms] sampled every 1 ms: 100 completed
//     flows starting at t0 with FCTs of 1..100 ms, one failed flow that
//     gave up at t0+500ms and one skipped flow;
//   - "ar", a 4-host ring all-reduce of a 64 MiB buffer from t0+200ms:
//     2(n-1)=6 steps of 4 flows, 1 ms each.
//
// Its telemetry has counters before, inside and after each window.
func synthRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{RunID: "r1", Scenario: "synth", Outcome: "ok", Points: []PointMeta{
		{Name: "inc", Pattern: "incast", Hosts: 103, Flows: 102, StartNs: t0, EndNs: t0 + 100*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
		{Name: "ar", Pattern: "allreduce", Hosts: 4, Flows: 24, BufferBytes: 64 << 20, StartNs: t0 + 200*ms, EndNs: t0 + 206*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
	}}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "manifest.json"), string(b))

	var inc, ar []perftest.FlowRecord
	for i := 1; i <= 100; i++ {
		inc = append(inc, perftest.FlowRecord{FlowID: i, Src: fmt.Sprintf("h%d", i), Dst: "r", Bytes: incastSize(i), StartNs: t0, EndNs: t0 + int64(i)*ms, Status: perftest.StatusOK, Tool: "ib_write_bw"})
	}
	inc = append(inc,
		perftest.FlowRecord{FlowID: 101, Src: "h101", Dst: "r", Bytes: 2_000_000, StartNs: t0, EndNs: t0 + 500*ms, Status: perftest.StatusFailed, Tool: "ib_write_bw"},
		perftest.FlowRecord{FlowID: 102, Src: "h102", Dst: "r", Bytes: 2_000_000, Status: perftest.StatusSkipped, Tool: "ib_write_bw"})
	for step := 0; step < 6; step++ {
		for h := 0; h < 4; h++ {
			s := t0 + 200*ms + int64(step)*ms
			ar = append(ar, perftest.FlowRecord{FlowID: step*4 + h, Src: fmt.Sprintf("g%d", h), Dst: fmt.Sprintf("g%d", (h+1)%4),
				Bytes: 16 << 20 / 4, StartNs: s, EndNs: s + ms - int64(h)*1000, Status: perftest.StatusOK, Tool: "ib_write_bw", Group: "ring", Step: step})
		}
	}
	var csv bytes.Buffer
	for _, err := range []error{WriteFlowsHeader(&csv), WriteFlowsCSV(&csv, "r1", "inc", inc), WriteFlowsCSV(&csv, "r1", "ar", ar)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	putFile(t, filepath.Join(dir, "flows.csv"), csv.String())

	var lp lpWriter
	lp.t = t
	p10 := "device=leaf1,port=1/0"
	p20 := "device=leaf1,port=2/0"
	// leaf1 1/0: a baseline before the point, samples in it, one in the
	// end margin, one between the points (the all-reduce's baseline).
	lp.add("port", p10, t0-50*ms, "pfc3_tx=40i,pfc3_rx=7i,ecn_marked=0i,tx_bytes=0i,drops=2i")
	lp.add("port", p10, t0+10*ms, "pfc3_tx=45i,pfc3_rx=8i,ecn_marked=5i,tx_bytes=1000i,drops=2i")
	lp.add("port", p10, t0+100*ms, "pfc3_tx=52i,pfc3_rx=9i,ecn_marked=20i,tx_bytes=9000i,drops=9i")
	lp.add("port", p10, t0+101*ms, "pfc3_tx=53i,pfc3_rx=9i,ecn_marked=20i,tx_bytes=9100i,drops=9i")
	lp.add("port", p10, t0+150*ms, "pfc3_tx=90i,pfc3_rx=9i,ecn_marked=30i,tx_bytes=9100i,drops=50i")
	lp.add("port", p10, t0+203*ms, "pfc3_tx=95i,pfc3_rx=9i,ecn_marked=30i,tx_bytes=9900i")
	// leaf1 2/0 first reports inside the window: its first sample there is
	// the baseline. Written out of time order on purpose.
	lp.add("port", p20, t0+90*ms, "pfc0_tx=130u")
	lp.add("port", p20, t0+5*ms, "pfc0_tx=100u")
	// Queues: ECN per queue repeats the port's count and must not add to it.
	lp.add("queue", p10+",queue=3", t0+50*ms, "depth_bytes=409600i,watermark=512000i,ecn_marked=20i")
	lp.add("queue", p20+",queue=3", t0+60*ms, "depth_bytes=102400i,watermark=102400i")
	lp.add("queue", p10+",queue=3", t0+150*ms, "depth_bytes=921600i,watermark=921600i") // between points
	lp.add("queue", p10+",queue=3", t0+204*ms, "depth_bytes=8192i,watermark=921600i")
	// One stream broke during the incast, another before the run.
	lp.add("collector_gap", "device=leaf1,target=t", t0+80*ms, fmt.Sprintf(`reason="eof",since_ns=%di,until_ns=%di`, t0+70*ms, t0+79*ms))
	lp.add("collector_gap", "device=leaf2,target=t", t0-10*ms, fmt.Sprintf(`reason="eof",since_ns=%di,until_ns=%di`, t0-30*ms, t0-20*ms))
	lp.save(dir)
	return dir
}

func loadSynth(t *testing.T) *Summary {
	t.Helper()
	return analyseDir(t, synthRun(t))
}

// analyseDir loads and analyses the run archive in dir.
func analyseDir(t *testing.T, dir string) *Summary {
	t.Helper()
	run, err := LoadRun(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyser{}.Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAnalyseFlows(t *testing.T) {
	s := loadSynth(t)
	inc := s.Points[0]
	if inc.Flows != 102 || inc.Failed != 2 {
		t.Errorf("flows %d failed %d, want 102 and 2", inc.Flows, inc.Failed)
	}
	// Failed flows are counted but not in the FCTs: 100 values of 1..100 ms.
	// Count, mean, min and max are exact; percentiles to 3 digits.
	if f := inc.FCT; f.Count != 100 || !near(f.P50, 50*ms) || !near(f.P99, 99*ms) || f.Min != ms || f.Max != 100*ms || f.Mean != 50.5e6 {
		t.Errorf("FCT %+v", f)
	}
	var got []string
	for _, b := range inc.BySize {
		got = append(got, fmt.Sprintf("%s:%d:%d-%d", b.Bucket, b.Flows, b.FCT.P50/ms, b.FCT.Max/ms))
	}
	if want := "<100KB:30:15-30 100KB-1MB:40:50-70 >=1MB:30:85-100"; strings.Join(got, " ") != want {
		t.Errorf("buckets %v, want %s", got, want)
	}
	// Completed bytes over first start..last end; the failed flow's later
	// end does not stretch the span.
	var bytes int64
	for i := 1; i <= 100; i++ {
		bytes += incastSize(i)
	}
	if want := float64(bytes) * 8 / float64(100*ms); inc.GoodputGbps != want || inc.EndNs != t0+100*ms {
		t.Errorf("goodput %v Gb/s over [%d, %d], want %v over 100 ms", inc.GoodputGbps, inc.StartNs, inc.EndNs, want)
	}
}

func TestAnalyseTelemetryWindows(t *testing.T) {
	s := loadSynth(t)
	inc, ar := s.Points[0], s.Points[1]
	if inc.WindowEndNs != t0+102*ms {
		t.Errorf("incast window ends at +%d ms, want end + 2 intervals", (inc.WindowEndNs-t0)/ms)
	}
	// 1/0: 53 (last in window, margin included) - 40 (before); 2/0: 130 - 100.
	if inc.Drops != 7 {
		t.Errorf("incast drops %d, want 9-2 = 7: the sample after the window (50) must not count", inc.Drops)
	}
	if inc.PFCPauseFrames != 13+30 {
		t.Errorf("incast PFC tx %d, want 43: the sample after the window (90) must not count", inc.PFCPauseFrames)
	}
	if inc.PFCPauseRx != 2 || inc.ECNMarked != 20 {
		t.Errorf("incast PFC rx %d ECN %d, want 2 and 20 (queue ECN not added to port ECN)", inc.PFCPauseRx, inc.ECNMarked)
	}
	if ar.PFCPauseFrames != 5 {
		t.Errorf("all-reduce PFC tx %d, want 95-90 = 5", ar.PFCPauseFrames)
	}
	if inc.PeakQueueBytes != 400<<10 || inc.PeakWatermarkBytes != 500<<10 {
		t.Errorf("peak queue %d watermark %d: the 900 KiB between the points must not count", inc.PeakQueueBytes, inc.PeakWatermarkBytes)
	}
	if len(inc.PeakQueues) != 2 || inc.PeakQueues[0].Port != "1/0" || inc.PeakQueues[1].Bytes != 100<<10 {
		t.Errorf("per-port peaks not sorted descending: %+v", inc.PeakQueues)
	}
	if ar.PeakQueueBytes != 8<<10 {
		t.Errorf("all-reduce peak %d, want 8 KiB", ar.PeakQueueBytes)
	}
	// In [t0, t0+102ms]: 3 port samples of 1/0, 2 of 2/0, 2 queue samples,
	// 1 gap.
	if inc.TelemetryPoints != 8 || inc.Gaps != 1 {
		t.Errorf("incast telemetry points %d gaps %d, want 8 and 1", inc.TelemetryPoints, inc.Gaps)
	}
	if ar.TelemetryPoints != 2 || ar.Gaps != 0 {
		t.Errorf("all-reduce telemetry points %d gaps %d, want 2 and 0", ar.TelemetryPoints, ar.Gaps)
	}
}

func TestAnalyseAllReduce(t *testing.T) {
	s := loadSynth(t)
	a := s.Points[1].AllReduce
	if a == nil || !a.Complete || len(a.Steps) != 6 || a.TotalNs != 6*ms {
		t.Fatalf("allreduce %+v", a)
	}
	for i, st := range a.Steps {
		// Each step spans its first start to its slowest flow's end.
		if st.Step != i || st.StartNs != t0+200*ms+int64(i)*ms || st.DurationNs != ms {
			t.Errorf("step %d: %+v", i, st)
		}
	}
	alg := float64(64<<20) * 8 / float64(6*ms)
	if a.AlgBWGbps != alg || a.BusBWGbps != alg*2*3/4 {
		t.Errorf("algbw %v busbw %v, want %v and algbw*2(n-1)/n = %v", a.AlgBWGbps, a.BusBWGbps, alg, alg*1.5)
	}
	if s.Points[0].AllReduce != nil {
		t.Error("an incast has no all-reduce summary")
	}
}

// An in-memory Run: a failed all-reduce flow leaves the bandwidths unset,
// the host count is taken from the ring, and configurable buckets apply.
func TestAnalyseInMemoryRun(t *testing.T) {
	run := &Run{Manifest: Manifest{RunID: "m", Points: []PointMeta{{Name: "ar", Pattern: "allreduce", BufferBytes: 1 << 20}}}}
	var rows []FlowRow
	for h := 0; h < 3; h++ {
		st := perftest.StatusOK
		if h == 2 {
			st = perftest.StatusFailed
		}
		rows = append(rows, rowOf("m", "ar", perftest.FlowRecord{FlowID: h, Src: fmt.Sprint(h), Dst: fmt.Sprint((h + 1) % 3),
			Bytes: int64(h+1) * 600_000, StartNs: 10, EndNs: 110, Status: st}))
	}
	run.Flows = rowsSource(rows)
	s, err := Analyser{Buckets: []int64{1_000_000}}.Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Points[0]
	if p.WindowStartNs != 10 || p.WindowEndNs != 110+ms {
		t.Errorf("window from the flows [%d, %d], want [10, 110+1ms]", p.WindowStartNs, p.WindowEndNs)
	}
	if a := p.AllReduce; a.Complete || a.AlgBWGbps != 0 || a.Hosts != 3 {
		t.Errorf("incomplete all-reduce %+v", a)
	}
	if len(p.BySize) != 2 || p.BySize[0].Bucket != "<1MB" || p.BySize[1].Bucket != ">=1MB" {
		t.Errorf("buckets %+v", p.BySize)
	}
	if _, err := (Analyser{Buckets: []int64{5, 5}}).Analyse(run); err == nil {
		t.Error("non-ascending buckets accepted")
	}
}

func TestWindows(t *testing.T) {
	const inf = math.MaxInt64
	w := func(start, end, trafficEnd, hostEnd int64) window {
		return window{start: start, end: end, trafficEnd: trafficEnd, hostEnd: hostEnd}
	}
	for _, tc := range []struct {
		name   string
		metas  []PointMeta
		margin int64
		want   []window
	}{
		{"two intervals", []PointMeta{{StartNs: 0, EndNs: 100, TelemetryIntervalNs: 10}}, 0, []window{w(0, 120, 100, inf)}},
		{"unknown interval", []PointMeta{{StartNs: 0, EndNs: 100}}, 0, []window{w(0, 100+ms, 100, inf)}},
		{"explicit margin", []PointMeta{{StartNs: 0, EndNs: 100, TelemetryIntervalNs: 10}}, 5, []window{w(0, 105, 100, inf)}},
		{"stops before the next point", []PointMeta{{StartNs: 0, EndNs: 100}, {StartNs: 150, EndNs: 200}}, 100, []window{w(0, 149, 100, 149), w(150, 300, 200, inf)}},
		{"no traffic, no window", []PointMeta{{StartNs: 150, EndNs: 200}, {}}, 100, []window{w(150, 300, 200, inf), {none: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := windows(tc.metas, tc.margin); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestLoadRunUsesPointReader(t *testing.T) {
	dir := synthRun(t)
	var read []string
	run, err := LoadRun(dir, func(path string, fn func(p collectors.Point) error) error {
		read = append(read, filepath.Base(path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(read)
	if strings.Join(read, " ") != "collector_gap.lp port.lp queue.lp" || s.Points[0].TelemetryPoints != 0 {
		t.Errorf("reader got %v; %d points", read, s.Points[0].TelemetryPoints)
	}
	if _, err := LoadRun(t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "manifest.json") {
		t.Errorf("empty dir: %v", err)
	}
}
