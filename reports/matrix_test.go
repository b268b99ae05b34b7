package reports

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// matrixFactor is each matrix point's FCT over the ideal FCT: the
// repetitions of one scheme and load average to ecmp 2.0 and 2.5, drill
// 1.6 and 2.0, so drill's avg FCT and slowdown are 20% below ecmp's at
// both loads.
func matrixFactor(scheme string, load float64, rep int) float64 {
	base := map[string]map[float64]float64{"ecmp": {0.5: 2.0, 0.8: 2.5}, "drill": {0.5: 1.6, 0.8: 2.0}}[scheme][load]
	return base + 0.1*float64(2*rep-3) // rep 1: -0.1, rep 2: +0.1
}

// matrixSizes are each point's flows: 5 small, 3 medium, 2 large, h1 to h3.
var matrixSizes = []int64{50_000, 50_000, 50_000, 50_000, 50_000, 500_000, 500_000, 500_000, 2_000_000, 2_000_000}

// matrixRun is a scheme x load x repetition run on a generated 2x2
// leaf-spine with one failed point, in memory: each point lasts 40 ms,
// 100 ms apart, with switch, queue and (ecmp only) RNIC telemetry.
func matrixRun(t *testing.T) *Run {
	t.Helper()
	lab, err := inventory.Generate("leafspine:2x2:2@100")
	if err != nil {
		t.Fatal(err)
	}
	path, err := lab.ShortestPath("h1", "h3")
	if err != nil {
		t.Fatal(err)
	}
	m := Manifest{RunID: "m1", Scenario: "lb-sweep", Outcome: "ok", Lab: lab}
	var rows []FlowRow
	var tel []collectors.Point
	pt := func(meas string, tags map[string]string, ts int64, fields map[string]any) {
		tags["lab"], tags["run"] = lab.Name, "m1"
		tel = append(tel, collectors.Point{Measurement: meas, Tags: tags, Fields: fields, Time: time.Unix(0, ts)})
	}
	i := 0
	for _, scheme := range []string{"ecmp", "drill"} {
		for _, load := range []float64{0.5, 0.8} {
			for rep := 1; rep <= 2; rep++ {
				name := fmt.Sprintf("%s/websearch/load%g/rep%d", scheme, load, rep)
				start := t0 + int64(i)*100*ms
				m.Points = append(m.Points, PointMeta{Name: name, Pattern: "workload", Lab: lab.Name, Status: StatusOK,
					Params:        map[string]any{ParamScheme: scheme, ParamLoad: load, ParamWorkload: "websearch", ParamRepetition: float64(rep)},
					RequestedLoad: load, AchievedLoad: load - 0.01, Hosts: 4, Flows: len(matrixSizes), LinkGbps: 100,
					StartNs: start, EndNs: start + 40*ms, TelemetryIntervalNs: ms})
				for j, size := range matrixSizes {
					ideal := inventory.IdealFCT(size, inventory.DefaultMTU, inventory.DefaultHeaderBytes, path)
					fct := int64(math.Round(float64(ideal) * matrixFactor(scheme, load, rep)))
					rows = append(rows, rowOf("m1", name, perftest.FlowRecord{FlowID: j, Src: "h1", Dst: "h3", Bytes: size,
						StartNs: start, EndNs: start + fct, Status: perftest.StatusOK, Tool: "ib_write_bw"}))
				}
				// leaf1's uplink sends 10(i+1) pauses, 1000 packets, 50 ECN
				// marks; spine1 5 pauses; the queue holds 100 KiB for 20 of
				// the 40 ms.
				up := func() map[string]string { return map[string]string{"device": "leaf1", "port": "3/0"} }
				pt("port", up(), start, map[string]any{"pfc3_tx": uint64(1000 * i), "tx_pkts": uint64(0), "ecn_marked": uint64(0)})
				pt("port", up(), start+40*ms, map[string]any{"pfc3_tx": uint64(1000*i + 10*(i+1)), "tx_pkts": uint64(1000), "ecn_marked": uint64(50)})
				pt("port", map[string]string{"device": "spine1", "port": "1/0"}, start, map[string]any{"pfc3_tx": uint64(0)})
				pt("port", map[string]string{"device": "spine1", "port": "1/0"}, start+40*ms, map[string]any{"pfc3_tx": uint64(5)})
				for _, s := range [][2]int64{{0, 0}, {10, 100 << 10}, {30, 0}, {40, 0}} {
					pt("queue", map[string]string{"device": "leaf1", "port": "3/0", "queue": "3"}, start+s[0]*ms, map[string]any{"depth_bytes": uint64(s[1])})
				}
				// out_of_sequence rises by 7 on h3 and 3 on h4. The runner reads
				// RNIC counters over SSH before and after a point: the "after"
				// sample comes 20 ms past the end, beyond the switches' margin.
				if scheme == "ecmp" {
					for h, d := range map[string]uint64{"h3": 7, "h4": 3} {
						pt("rnic", map[string]string{"host": h, "device": "mlx5_0"}, start-5*ms, map[string]any{"out_of_sequence": uint64(100), "np_cnp_sent": uint64(0)})
						pt("rnic", map[string]string{"host": h, "device": "mlx5_0"}, start+60*ms, map[string]any{"out_of_sequence": 100 + d, "np_cnp_sent": uint64(2)})
					}
				}
				i++
			}
		}
	}
	// A third drill repetition failed before sending anything.
	m.Points = append(m.Points, PointMeta{Name: "drill/websearch/load0.8/rep3", Pattern: "workload", Status: StatusFailed, Error: "agent h3: timeout",
		Params: map[string]any{ParamScheme: "drill", ParamLoad: 0.8, ParamWorkload: "websearch", ParamRepetition: float64(3)}, RequestedLoad: 0.8,
		StartNs: t0 + int64(i)*100*ms, EndNs: t0 + int64(i)*100*ms + ms})
	return &Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(tel)}
}

func analyseMatrix(t *testing.T, a Analyser) *Summary {
	t.Helper()
	s, err := a.Analyse(matrixRun(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMatrixSlowdown(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	p := s.Points[0] // ecmp 0.5 rep1: every flow at 1.9x its ideal FCT
	if p.Scheme != "ecmp" || p.Workload != "websearch" || p.Load != 0.5 || p.AchievedLoad != 0.49 {
		t.Errorf("params: %+v", p)
	}
	if sl := p.Slowdown; sl.Count != 10 || sl.Min != 1.9 || sl.Max != 1.9 || math.Abs(sl.Mean-1.9) > 1e-9 || sl.P99 < 1.9 || sl.P99 > 1.9*1.001 {
		t.Errorf("slowdown %+v, want 1.9 for every flow", sl)
	}
	if len(p.BySize) != 3 || p.BySize[0].Slowdown.Count != 5 || p.BySize[2].Slowdown.Count != 2 {
		t.Errorf("slowdown by size %+v", p.BySize)
	}
	// 1 MB from h1 to h3 (leaf, spine, leaf) has the hand-computed ideal of
	// inventory's test: 85765 ns; 2 MB: 489 packets.
	l := inventory.PathLink{Gbps: 100, DelayNs: 1000}
	if p.BySize[2].FCT.Min != int64(math.Round(1.9*float64(inventory.IdealFCT(2_000_000, 4096, 82, []inventory.PathLink{l, l, l, l})))) {
		t.Errorf("large-flow FCT %d", p.BySize[2].FCT.Min)
	}
	// Without a lab snapshot there is no ideal: slowdown is n/a, not 0.
	run := matrixRun(t)
	run.Manifest.Lab = nil
	s2, err := Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Points[0].Slowdown.Count != 0 || s2.Points[0].NoIdeal != 10 {
		t.Errorf("no lab: slowdown %+v, %d flows without ideal", s2.Points[0].Slowdown, s2.Points[0].NoIdeal)
	}
}

func TestMatrixFabric(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	for i, p := range s.Points[:8] {
		if len(p.PFCByTier) != 2 || p.PFCByTier[0].Tier != "leaf" || p.PFCByTier[1].Tier != "spine" {
			t.Fatalf("%s: tiers %+v", p.Name, p.PFCByTier)
		}
		leaf, spine := p.PFCByTier[0], p.PFCByTier[1]
		if leaf.Tx != uint64(10*(i+1)) || leaf.TxPerS != float64(10*(i+1))/0.04 || spine.Tx != 5 || spine.TxPerS != 125 || p.PFCPauseFrames != leaf.Tx+5 {
			t.Errorf("%s: leaf %+v spine %+v total %d", p.Name, leaf, spine, p.PFCPauseFrames)
		}
		if p.ECNMarkRate == nil || *p.ECNMarkRate != 0.05 || p.ECNMarksPerSec != 50/0.04 {
			t.Errorf("%s: ECN rate %v, %v/s", p.Name, p.ECNMarkRate, p.ECNMarksPerSec)
		}
		// 100 KiB held for 20 of 40 ms.
		if p.PeakQueueBytes != 100<<10 || p.MeanQueueBytes != 50<<10 || p.PeakQueues[0].MeanBytes != 50<<10 {
			t.Errorf("%s: queue peak %d mean %v", p.Name, p.PeakQueueBytes, p.MeanQueueBytes)
		}
		if p.Scheme == "ecmp" {
			if p.OutOfOrder == nil || *p.OutOfOrder != 10 || p.RNIC["np_cnp_sent"] != 4 {
				t.Errorf("%s: out of order %v, rnic %v; want 7+3 and 2+2 CNPs", p.Name, p.OutOfOrder, p.RNIC)
			}
		} else if p.OutOfOrder != nil {
			t.Errorf("%s: no rnic telemetry must give n/a, got %d", p.Name, *p.OutOfOrder)
		}
		if len(p.QueueSeries) != 1 || len(p.PFCSeries) != 2 {
			t.Errorf("%s: %d queue and %d pause series", p.Name, len(p.QueueSeries), len(p.PFCSeries))
		}
	}
}

func TestMatrixGroupsAndComparisons(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	if len(s.Groups) != 4 || s.Baseline != "ecmp" {
		t.Fatalf("%d groups, baseline %q", len(s.Groups), s.Baseline)
	}
	d8 := s.Groups[3]
	if d8.Scheme != "drill" || d8.Load != 0.8 || d8.OK != 2 || d8.FailedPoints != 1 || len(d8.Points) != 3 {
		t.Errorf("drill 0.8 group %+v", d8)
	}
	// Slowdown means 1.9 and 2.1 over the two repetitions.
	if sd := d8.BySize[0].SlowdownMean; sd.N != 2 || math.Abs(sd.Mean-2.0) > 1e-9 || sd.Min != 1.9 || sd.Max != 2.1 || math.Abs(sd.StdDev-math.Sqrt(0.02)) > 1e-9 {
		t.Errorf("spread %+v", sd)
	}
	want := []string{
		"drill reduces avg FCT by 20.0% vs ecmp at load 0.5 (websearch)",
		"drill reduces avg slowdown by 20.0% vs ecmp at load 0.8 (websearch)",
		"drill reduces p99 FCT of >=1MB flows by 20.0% vs ecmp at load 0.8 (websearch)",
	}
	var got []string
	for _, c := range s.Comparisons {
		got = append(got, c.Sentence)
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
	// The other way round with drill as the baseline.
	s = analyseMatrix(t, Analyser{BaselineScheme: "drill"})
	if s.Comparisons[0].Sentence != "ecmp increases avg FCT by 25.0% vs drill at load 0.5 (websearch) [n=2 vs 2]" {
		t.Errorf("baseline drill: %q", s.Comparisons[0].Sentence)
	}
}

// The comparison sentence on a hand-checkable case.
func TestComparisonSentence(t *testing.T) {
	group := func(scheme string, avg, p99 float64) *Group {
		return &Group{Scheme: scheme, Condition: "load=0.8", Load: 0.8, Params: map[string]any{ParamScheme: scheme, ParamLoad: 0.8, "transport": "irn"},
			BySize: []GroupBucket{{Bucket: "all", FCTMean: Spread{N: 1, Mean: avg}, FCTP99: Spread{N: 1, Mean: p99}}}}
	}
	cs := compareTwo(group("x", 80_000, 300_000), group("y", 100_000, 200_000))
	if len(cs) != 2 {
		t.Fatalf("%d comparisons, want avg and p99 FCT (no slowdowns)", len(cs))
	}
	if c := cs[0]; c.Sentence != "x reduces avg FCT by 20.0% vs y at load 0.8 (transport=irn) [n=1 vs 1]" || c.ReductionPct != 20 || c.Ratio != 1.25 {
		t.Errorf("%+v", c)
	}
	if c := cs[1]; c.Sentence != "x increases p99 FCT by 50.0% vs y at load 0.8 (transport=irn) [n=1 vs 1]" || c.ReductionPct != -50 {
		t.Errorf("%+v", c)
	}
}

// A difference inside the noise allowance of the repetitions says so; the
// allowance is regress's (Noise): 2 x sqrt(10^2/3 + 10^2/3) = 16.3 here.
func TestComparisonWithinNoise(t *testing.T) {
	group := func(scheme string, vals ...float64) *Group {
		return &Group{Scheme: scheme, Condition: "load=0.3 workload=websearch", Load: 0.3, Workload: "websearch",
			Params: map[string]any{ParamScheme: scheme, ParamLoad: 0.3, ParamWorkload: "websearch"},
			BySize: []GroupBucket{{Bucket: "all", FCTMean: SpreadOf(vals)}}}
	}
	cs := compareTwo(group("drill", 105, 115, 125), group("ecmp", 90, 100, 110))
	if len(cs) != 1 {
		t.Fatalf("%d comparisons", len(cs))
	}
	if c := cs[0]; !c.WithinNoise || math.Abs(c.Noise-2*math.Sqrt(200.0/3)) > 1e-9 || c.N != 3 || c.BaselineN != 3 ||
		c.Sentence != "drill increases avg FCT by 15.0% vs ecmp at load 0.3 (websearch) [n=3 vs 3, within noise]" {
		t.Errorf("%+v", c)
	}
	cs = compareTwo(group("drill", 125, 135, 145), group("ecmp", 90, 100, 110))
	if c := cs[0]; c.WithinNoise || c.Sentence != "drill increases avg FCT by 35.0% vs ecmp at load 0.3 (websearch) [n=3 vs 3]" {
		t.Errorf("beyond noise: %+v", c)
	}
}

func TestBaseline(t *testing.T) {
	gs := []Group{{Scheme: "letflow"}, {Scheme: "drill"}, {Scheme: "ecmp"}, {Scheme: "drill"}}
	for _, tc := range []struct {
		groups     []Group
		want, pick string
	}{
		{gs, "", "ecmp"},
		{gs, "letflow", "letflow"},
		{gs[:2], "", "drill"}, // no ecmp: the first by name
		{nil, "", ""},
	} {
		if got, err := baseline(tc.groups, tc.want); got != tc.pick || err != nil {
			t.Errorf("baseline(%v, %q) = %q, %v; want %q", tc.groups, tc.want, got, err, tc.pick)
		}
	}
	// A scheme the run does not have is a mistake, not a silent ecmp.
	if got, err := baseline(gs, "dril"); !errors.Is(err, ErrNoSuchScheme) || !strings.Contains(err.Error(), `"dril"`) ||
		!strings.Contains(err.Error(), "the schemes are drill, ecmp, letflow") {
		t.Errorf("baseline(dril) = %q, %v", got, err)
	}
	if _, err := (Analyser{BaselineScheme: "conga"}).Analyse(matrixRun(t)); !errors.Is(err, ErrNoSuchScheme) {
		t.Errorf("Analyse with baseline conga: %v", err)
	}
}

// Two runs without Params: each run's scenario name is its scheme, and
// the points of the same name are compared.
func TestCompareRuns(t *testing.T) {
	mk := func(id, scenario string, fct int64) *Run {
		var rows []FlowRow
		for i := range 10 {
			rows = append(rows, FlowRow{Run: id, Point: "inc", FlowID: i, Src: "h1", Dst: "h2", Size: 1000, StartNs: 0, EndNs: fct, FCTNs: fct, Status: "ok"})
		}
		return &Run{Manifest: Manifest{RunID: id, Scenario: scenario, Points: []PointMeta{{Name: "inc", Pattern: "incast", StartNs: 0, EndNs: fct}}}, Flows: rowsSource(rows)}
	}
	s, err := Analyser{BaselineScheme: "old"}.Compare([]*Run{mk("r1", "old", 100_000), mk("r2", "new", 50_000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 2 || s.Points[1].Run != "r2" || s.Points[1].Scheme != "new" || strings.Join(s.Runs, ",") != "r1,r2" {
		t.Fatalf("points %+v", s.Points)
	}
	if len(s.Comparisons) == 0 || s.Comparisons[0].Sentence != "new reduces avg FCT by 50.0% vs old (inc) [n=1 vs 1]" {
		t.Errorf("comparisons %+v", s.Comparisons)
	}
	// Two runs of one scenario: the run ids tell them apart.
	s, err = Analyser{}.Compare([]*Run{mk("r1", "same", 100_000), mk("r2", "same", 50_000)})
	if err != nil || s.Points[0].Scheme != "r1" || len(s.Comparisons) == 0 {
		t.Errorf("same scenario: %v, %+v", err, s.Points)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./reports -run Golden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output differs from %s (go test ./reports -run Golden -update to accept):\n%s", path, got)
	}
}

func TestMatrixGolden(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	for _, f := range []struct{ format, file string }{{"md", "matrix.md"}, {"csv", "matrix.csv"}} {
		var b bytes.Buffer
		if err := Write(&b, s, f.format); err != nil {
			t.Fatal(err)
		}
		golden(t, f.file, b.Bytes())
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, want := range []string{"avg FCT vs load (websearch)", "p99 FCT vs load (websearch)", "FCT slowdown by flow size (load=0.8 workload=websearch)",
		"FCT CDF (load=0.5 workload=websearch)", "<details><summary>ecmp/websearch/load0.5/rep1</summary>", "drill reduces avg FCT by 20.0% vs ecmp at load 0.8 (websearch)"} {
		if !strings.Contains(h, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// FCT vs load (avg, p99), slowdown by size and CDF for each load, two
	// time series per successful point.
	if n := strings.Count(h, "<svg"); n != 2+2+2+2*8 {
		t.Errorf("%d plots", n)
	}
}
