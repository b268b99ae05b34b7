package reports

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

func genLab(t *testing.T, spec string) *inventory.Lab {
	t.Helper()
	lab, err := inventory.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

func okRow(point string, id int, src, dst string, size, start, end int64) FlowRow {
	return rowOf("r", point, perftest.FlowRecord{FlowID: id, Src: src, Dst: dst, Bytes: size, StartNs: start, EndNs: end, Status: perftest.StatusOK})
}

func tel(meas string, tags map[string]string, ts int64, fields map[string]any) collectors.Point {
	return collectors.Point{Measurement: meas, Tags: tags, Fields: fields, Time: time.Unix(0, ts)}
}

// A point that failed before any flow started (no end in the manifest)
// has no telemetry window: its fabric numbers are n/a, not the counters
// since the devices booted, which a window at time 0 reaching to the next
// point used to report.
func TestPointWithoutTrafficHasNoFabricNumbers(t *testing.T) {
	m := Manifest{RunID: "r", Lab: genLab(t, "leafspine:2x2:2@100"), Points: []PointMeta{
		{Name: "a", Pattern: "incast", Status: StatusOK, StartNs: t0, EndNs: t0 + 10*ms, TelemetryIntervalNs: ms},
		{Name: "b", Pattern: "incast", Status: StatusFailed, Error: "plan: no such host"},
		{Name: "c", Pattern: "incast", Status: StatusOK, StartNs: t0 + 100*ms, EndNs: t0 + 110*ms, TelemetryIntervalNs: ms},
	}}
	rows := []FlowRow{okRow("a", 1, "h1", "h3", 1000, t0, t0+10*ms), okRow("c", 1, "h1", "h3", 1000, t0+100*ms, t0+110*ms)}
	rnic := func(ts int64, v uint64) collectors.Point {
		return tel("rnic", map[string]string{"host": "h3", "device": "mlx5_0"}, ts, map[string]any{"out_of_sequence": v})
	}
	port := func(ts int64, v uint64) collectors.Point {
		return tel("port", map[string]string{"device": "leaf1", "port": "1/0"}, ts, map[string]any{"pfc3_tx": v, "drops": v})
	}
	run := &Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource([]collectors.Point{
		rnic(t0-5*ms, 5000), rnic(t0+20*ms, 5003), rnic(t0+95*ms, 5003), rnic(t0+130*ms, 5004),
		port(t0-5*ms, 7000), port(t0+5*ms, 7002), port(t0+11*ms, 7002), port(t0+105*ms, 7002),
	})}
	s, err := Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := s.Points[0], s.Points[1], s.Points[2]
	if a.NoTraffic || a.OutOfOrder == nil || *a.OutOfOrder != 3 || a.PFCPauseFrames != 2 || c.OutOfOrder == nil || *c.OutOfOrder != 1 {
		t.Errorf("points with traffic: a %+v %v, c %v", a.PFCPauseFrames, a.OutOfOrder, c.OutOfOrder)
	}
	if !b.NoTraffic || b.OutOfOrder != nil || b.RNIC != nil || b.PFCPauseFrames != 0 || b.Drops != 0 || b.TelemetryPoints != 0 {
		t.Errorf("point without traffic: no_traffic %v, out of order %v, rnic %v, pauses %d, drops %d, %d samples; want n/a",
			b.NoTraffic, b.OutOfOrder, b.RNIC, b.PFCPauseFrames, b.Drops, b.TelemetryPoints)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| b | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |") {
		t.Errorf("fabric row of b is not n/a:\n%s", md.String())
	}
}

// A matrix over labs: each point's ideal FCTs and switch tiers come from
// the lab it ran on (Manifest.Labs), else from Manifest.Lab; a lab the
// archive has no snapshot of gives n/a, not another lab's numbers.
func TestPointsUseTheirOwnLab(t *testing.T) {
	small, big := genLab(t, "leafspine:2x2:2@100"), genLab(t, "leafspine:2x4:2@100")
	m := Manifest{RunID: "r", Lab: small, Labs: map[string]*inventory.Lab{small.Name: small, big.Name: big}, Points: []PointMeta{
		{Name: "small", Pattern: "incast", Lab: small.Name, StartNs: t0, EndNs: t0 + ms},
		{Name: "big", Pattern: "incast", Lab: big.Name, StartNs: t0 + 10*ms, EndNs: t0 + 11*ms},
		{Name: "unnamed", Pattern: "incast", StartNs: t0 + 20*ms, EndNs: t0 + 21*ms},
		{Name: "elsewhere", Pattern: "incast", Lab: "leafspine:4x4:4@100", StartNs: t0 + 30*ms, EndNs: t0 + 31*ms},
	}}
	var rows []FlowRow
	var pts []collectors.Point
	for i, p := range m.Points {
		dst := "h3"
		if p.Name == "big" {
			dst = "h8" // only the big lab has it
		}
		rows = append(rows, okRow(p.Name, 1, "h1", dst, 1_000_000, p.StartNs, p.EndNs))
		sw := map[string]string{"device": "leaf1", "port": "1/0"}
		if p.Name == "big" {
			sw["device"] = "leaf4" // only the big lab has it
		}
		pts = append(pts, tel("port", sw, p.StartNs, map[string]any{"pfc3_tx": uint64(0)}),
			tel("port", sw, p.EndNs, map[string]any{"pfc3_tx": uint64(i + 1)}))
	}
	s, err := Analyse(&Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(pts)})
	if err != nil {
		t.Fatal(err)
	}
	path, err := big.ShortestPath("h1", "h8")
	if err != nil {
		t.Fatal(err)
	}
	wantBig := float64(ms) / float64(inventory.IdealFCT(1_000_000, inventory.DefaultMTU, inventory.DefaultHeaderBytes, path))
	for _, tc := range []struct {
		point    string
		slowdown bool
		tier     string
	}{{"small", true, "leaf"}, {"big", true, "leaf"}, {"unnamed", true, "leaf"}, {"elsewhere", false, "unknown"}} {
		var p PointSummary
		for _, x := range s.Points {
			if x.Name == tc.point {
				p = x
			}
		}
		if got := p.Slowdown.Count > 0; got != tc.slowdown || (!got && p.NoIdeal != 1) {
			t.Errorf("%s: slowdown %+v (%d without ideal), want known=%v", tc.point, p.Slowdown, p.NoIdeal, tc.slowdown)
		}
		if len(p.PFCByTier) != 1 || p.PFCByTier[0].Tier != tc.tier {
			t.Errorf("%s: tiers %+v, want %s", tc.point, p.PFCByTier, tc.tier)
		}
	}
	if got := s.Points[1].Slowdown.Mean; math.Abs(got-wantBig) > 0.002*wantBig {
		t.Errorf("big lab slowdown %v, want %v (its own path h1-h8)", got, wantBig)
	}
}

// A workload's goodput and rates divide by its arrival window plus the
// mean ideal FCT, so one straggler does not decide them; an incast's
// goodput stays bytes over first start to last end.
func TestRatesOverTheArrivalWindow(t *testing.T) {
	lab := genLab(t, "leafspine:2x2:2@100")
	path, err := lab.ShortestPath("h1", "h3")
	if err != nil {
		t.Fatal(err)
	}
	ideal := inventory.IdealFCT(1_000_000, inventory.DefaultMTU, inventory.DefaultHeaderBytes, path)
	mk := func(window int64) *Run {
		m := Manifest{RunID: "r", Lab: lab, Points: []PointMeta{
			{Name: "ws", Pattern: "workload", WindowNs: window, StartNs: t0, EndNs: t0 + 100*ms, TelemetryIntervalNs: ms},
			{Name: "inc", Pattern: "incast", StartNs: t0 + 200*ms, EndNs: t0 + 204*ms, TelemetryIntervalNs: ms},
		}}
		var rows []FlowRow
		// Ten 1 MB flows arrive over 9 ms (the window is 10 ms), each done
		// in 1 ms but the last, a straggler that ends at 100 ms.
		for i := range 10 {
			start := t0 + int64(i)*ms
			end := start + ms
			if i == 9 {
				end = t0 + 100*ms
			}
			rows = append(rows, okRow("ws", i, "h1", "h3", 1_000_000, start, end))
		}
		rows = append(rows, okRow("inc", 0, "h1", "h3", 1_000_000, t0+200*ms, t0+202*ms), okRow("inc", 1, "h2", "h3", 1_000_000, t0+200*ms, t0+204*ms))
		sw := map[string]string{"device": "leaf2", "port": "1/0"}
		tm := []collectors.Point{
			tel("port", sw, t0, map[string]any{"ecn_marked": uint64(0), "pfc3_tx": uint64(0)}),
			tel("port", sw, t0+100*ms, map[string]any{"ecn_marked": uint64(1000), "pfc3_tx": uint64(30)}),
		}
		return &Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(tm)}
	}
	for _, tc := range []struct {
		name           string
		window, wantWn int64
	}{{"the manifest's window", 10 * ms, 10 * ms}, {"window from the flows' starts", 0, 9 * ms}} {
		s, err := Analyse(mk(tc.window))
		if err != nil {
			t.Fatal(err)
		}
		ws, inc := s.Points[0], s.Points[1]
		span := tc.wantWn + ideal
		if ws.ArrivalWindowNs != tc.wantWn || ws.RateSpanNs != span || ws.DurationNs != 100*ms {
			t.Errorf("%s: window %d rate span %d duration %d, want %d, %d, 100 ms", tc.name, ws.ArrivalWindowNs, ws.RateSpanNs, ws.DurationNs, tc.wantWn, span)
		}
		secs := float64(span) / 1e9
		if g := 10 * 8e6 / float64(span); math.Abs(ws.GoodputGbps-g) > 1e-9 {
			t.Errorf("%s: goodput %v, want %v Gb/s (not %v over the straggler's 100 ms)", tc.name, ws.GoodputGbps, g, 0.8)
		}
		if math.Abs(ws.ECNMarksPerSec-1000/secs) > 1e-6 || math.Abs(ws.PFCPauseTxPerS-30/secs) > 1e-6 || math.Abs(ws.PFCByTier[0].TxPerS-30/secs) > 1e-6 {
			t.Errorf("%s: ECN %v/s, pauses %v/s (tier %v), want per second of %d ns", tc.name, ws.ECNMarksPerSec, ws.PFCPauseTxPerS, ws.PFCByTier[0].TxPerS, span)
		}
		if inc.ArrivalWindowNs != 0 || inc.RateSpanNs != 4*ms || math.Abs(inc.GoodputGbps-2*8e6/float64(4*ms)) > 1e-9 {
			t.Errorf("incast: window %d span %d goodput %v, want first start to last end", inc.ArrivalWindowNs, inc.RateSpanNs, inc.GoodputGbps)
		}
	}
}
