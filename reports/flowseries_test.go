package reports

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/perftest"
)

const us1 = int64(1000)

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Rates from a cumulative counter: growth spread evenly over each
// sampling interval; a reset leaves its interval unknown (neither a
// negative nor a counter's worth of bytes), and a period or bin that
// known intervals cover too little of is unknown, not zero.
func TestRatesFromCumulativeCounters(t *testing.T) {
	t.Parallel()
	// 10 Gb/s = 1.25 bytes/ns: 125000 bytes per 100 us.
	steady := []sample{{0, 0}, {100 * us1, 125000}, {200 * us1, 250000}, {300 * us1, 375000}}
	reset := []sample{{0, 0}, {100 * us1, 125000}, {200 * us1, 10}, {300 * us1, 125010}}
	for _, c := range []struct {
		name     string
		s        []sample
		from, to int64
		want     float64
		ok       bool
	}{
		{"steady, whole span", steady, 0, 300 * us1, 10, true},
		{"steady, inside one interval", steady, 120 * us1, 150 * us1, 10, true},
		{"reset interval skipped", reset, 0, 300 * us1, 10, true},
		{"mostly the reset's interval", reset, 100 * us1, 250 * us1, 0, false},
		{"beyond the samples", steady, 300 * us1, 900 * us1, 0, false},
		{"empty period", steady, 50, 50, 0, false},
	} {
		g, ok := meanGbps(c.s, c.from, c.to)
		if ok != c.ok || (ok && !closeTo(g, c.want)) {
			t.Errorf("%s: %.6f Gb/s, ok %v; want %.6f, %v", c.name, g, ok, c.want, c.ok)
		}
	}

	// Bins of 50 us over samples every 100 us: each bin gets half an
	// interval's bytes over half its time, the same 10 Gb/s; the bins of
	// the reset's interval stay unset.
	w := window{start: 0, end: 300 * us1}
	b := newBins(w, 6)
	rateBins(reset, b)
	for i := range b.v {
		unknown := i == 2 || i == 3
		if b.set[i] == unknown || (b.set[i] && !closeTo(b.v[i], 10)) {
			t.Errorf("bin %d: %.6f set %v; want 10 Gb/s unless in the reset's interval", i, b.v[i], b.set[i])
		}
	}
	// A rate change inside a bin averages over the bin.
	b = newBins(window{start: 0, end: 200 * us1}, 1)
	rateBins([]sample{{0, 0}, {100 * us1, 125000}, {200 * us1, 375000}}, b)
	if !closeTo(b.v[0], 15) {
		t.Errorf("one bin over 10 and 20 Gb/s: %.6f, want 15", b.v[0])
	}
}

func TestVictim(t *testing.T) {
	t.Parallel()
	g := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		ps   []PeriodRate
		want string // yes, no, n/a
	}{
		{"rate halves and then some", []PeriodRate{{Name: PeriodBefore, Gbps: g(40)}, {Name: PeriodDuring, Gbps: g(19.9)}}, "yes"},
		{"exactly half is not below half", []PeriodRate{{Name: PeriodBefore, Gbps: g(40)}, {Name: PeriodDuring, Gbps: g(20)}}, "no"},
		{"rate rises", []PeriodRate{{Name: PeriodBefore, Gbps: g(15)}, {Name: PeriodDuring, Gbps: g(21)}}, "no"},
		{"before unknown", []PeriodRate{{Name: PeriodBefore}, {Name: PeriodDuring, Gbps: g(1)}}, na},
		{"started during the burst", []PeriodRate{{Name: PeriodDuring, Gbps: g(1)}, {Name: PeriodAfter, Gbps: g(40)}}, na},
		{"idle before", []PeriodRate{{Name: PeriodBefore, Gbps: g(0)}, {Name: PeriodDuring, Gbps: g(0)}}, na},
	} {
		if got := victimCell(victim(c.ps)); got != c.want {
			t.Errorf("%s: victim %s, want %s", c.name, got, c.want)
		}
	}
}

// The flows pass keeps the largest flows (ties in file order), counts
// each host's flows and takes a burst point's steps after the background
// as its burst window; a flow's rate is read where it is alone.
func TestFlowPick(t *testing.T) {
	t.Parallel()
	lab := genLab(t, "leafspine:2x2:2@100")
	var fp flowPick
	row := func(id, step int, src, dst string, size, start, end int64) FlowRow {
		r := okRow("p", id, src, dst, size, start, end)
		r.Step = step
		return r
	}
	rows := []FlowRow{
		row(0, 0, "h1", "h3", 50_000_000, t0, t0+30*ms),
		row(1, 0, "h2", "h4", 50_000_000, t0, t0+20*ms),
		row(2, 1, "h1", "h4", 64<<10, t0+10*ms, t0+11*ms),
		row(3, 2, "h3", "h4", 64<<10, t0+11*ms, t0+13*ms),
	}
	for i := range 10 { // smaller long flows: only the largest maxLongFlows stay
		rows = append(rows, row(10+i, 0, "h2", "h1", longFlowBytes+int64(i), t0, t0+ms))
	}
	for _, r := range rows {
		fp.add("burst", r)
	}
	if len(fp.long) != maxLongFlows || fp.long[0].FlowID != 0 || fp.long[1].FlowID != 1 || fp.long[2].FlowID != 19 {
		var ids []int
		for _, r := range fp.long {
			ids = append(ids, r.FlowID)
		}
		t.Errorf("long flows %v: want %d, 0 and 1 first, then the largest others", ids, maxLongFlows)
	}
	if b := fp.burst; b == nil || b.StartNs != t0+10*ms || b.EndNs != t0+13*ms {
		t.Errorf("burst window %+v, want the steps after 0: 10 ms to 13 ms", b)
	}
	// h3 receives only flow 0: its leaf port's tx. h4 receives three
	// flows, h2 sends flow 1 and the small ones: flow 1 has no port.
	if k, label, ok := fp.flowPort(lab, rows[0]); !ok || k != (pkey{"leaf2", "1/0", "tx_bytes"}) || !strings.Contains(label, "to h3") {
		t.Errorf("flow 0 read at %v %q %v, want leaf2 1/0 tx_bytes", k, label, ok)
	}
	if k, _, ok := fp.flowPort(lab, rows[1]); ok {
		t.Errorf("flow 1 shares both its ends, yet read at %v", k)
	}
	var solo flowPick
	solo.add("incast", rows[1])
	solo.add("incast", row(5, 0, "h1", "h4", 1000, t0, t0+ms))
	if k, _, ok := solo.flowPort(lab, rows[1]); !ok || k != (pkey{"leaf1", "2/0", "rx_bytes"}) || solo.burst != nil {
		t.Errorf("flow 1 alone at its sender: read at %v %v, burst %v; want leaf1 2/0 rx_bytes, no burst", k, ok, solo.burst)
	}
}

// End to end through Analyse on synthetic telemetry: a long flow at 40
// Gb/s that drops to 10 during the burst is a victim; fabric ports'
// utilisation is tx over link speed; a port whose PAUSE counter grew
// during the burst is paused, one whose counter grew only before it is
// not.
func TestSeriesVictimsAndPaths(t *testing.T) {
	t.Parallel()
	lab := genLab(t, "leafspine:2x2:2@100")
	const step = 100 * us1
	m := Manifest{RunID: "r", Lab: lab, Points: []PointMeta{{Name: "p", Pattern: "burst", Status: StatusOK,
		StartNs: t0, EndNs: t0 + 30*ms, TelemetryIntervalNs: step}}}
	row := func(id, step int, src, dst string, size, start, end int64) FlowRow {
		r := rowOf("r", "p", perftest.FlowRecord{FlowID: id, Step: step, Src: src, Dst: dst, Bytes: size, StartNs: start, EndNs: end, Status: perftest.StatusOK})
		return r
	}
	rows := []FlowRow{row(0, 0, "h1", "h3", 100_000_000, t0, t0+30*ms), row(1, 1, "h2", "h4", 64<<10, t0+10*ms, t0+20*ms)}
	var pts []collectors.Point
	port := func(dev, p string, ts int64, f map[string]any) {
		pts = append(pts, tel("port", map[string]string{"device": dev, "port": p}, ts, f))
	}
	var delivered, uplink uint64
	for ts := t0; ts <= t0+30*ms; ts += step {
		port("leaf2", "1/0", ts, map[string]any{"tx_bytes": delivered})
		port("leaf1", "3/0", ts, map[string]any{"tx_bytes": uplink})
		// spine1 1/0 paused before the burst only, spine2 2/0 during it
		port("spine1", "1/0", ts, map[string]any{"pfc3_tx": uint64(min(max(ts-t0-2*ms, 0)/step, 5)), "pfc3_rx": uint64(0)})
		port("spine2", "2/0", ts, map[string]any{"pfc3_rx": uint64(max(ts-t0-12*ms, 0) / step)})
		rate := uint64(500_000) // 40 Gb/s per 100 us
		if ts >= t0+10*ms && ts < t0+20*ms {
			rate = 125_000 // 10 Gb/s
		}
		delivered += rate
		uplink += 625_000 // 50 Gb/s on a 100 Gb/s link
	}
	s, err := Analyse(&Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(pts)})
	if err != nil {
		t.Fatal(err)
	}
	// Files may hold samples in any order: the same numbers from the
	// samples reversed.
	rev := slices.Clone(pts)
	slices.Reverse(rev)
	s2, err := Analyse(&Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(rev)})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Points[0]
	if q := s2.Points[0]; !reflect.DeepEqual(p.LongFlows, q.LongFlows) || !reflect.DeepEqual(p.Paths, q.Paths) || !reflect.DeepEqual(p.PathSeries, q.PathSeries) {
		t.Errorf("samples reversed: long flows %+v, paths %+v; in order %+v, %+v", q.LongFlows, q.Paths, p.LongFlows, p.Paths)
	}
	if len(p.LongFlows) != 1 || p.LongFlows[0].Victim == nil || !*p.LongFlows[0].Victim {
		t.Fatalf("long flows %+v: want flow 0, a victim", p.LongFlows)
	}
	for _, x := range p.LongFlows[0].Periods {
		want := map[string]float64{PeriodBefore: 40, PeriodDuring: 10, PeriodAfter: 40}[x.Name]
		if x.Gbps == nil || math.Abs(*x.Gbps-want) > 0.5 {
			t.Errorf("%s: %v Gb/s, want about %.0f", x.Name, x.Gbps, want)
		}
	}
	if len(p.FlowSeries) != 1 || len(p.FlowSeries[0].V) == 0 {
		t.Errorf("flow series %+v", p.FlowSeries)
	}
	if len(p.Paths) != 8 {
		t.Fatalf("%d fabric ports, want 8 (2 leaves x 2 uplinks, 2 spines x 2 downlinks)", len(p.Paths))
	}
	for _, u := range p.Paths {
		name := u.Device + ":" + u.Port
		switch name {
		case "leaf1:3/0":
			if u.Tier != "leaf" || u.MeanUtil == nil || math.Abs(*u.MeanUtil-0.5) > 0.01 || u.PeakUtil == nil || math.Abs(*u.PeakUtil-0.5) > 0.01 {
				t.Errorf("%s: tier %s, util mean %v peak %v; want leaf, 0.5", name, u.Tier, u.MeanUtil, u.PeakUtil)
			}
		case "spine2:2/0":
			if !u.Paused() || u.PauseRx == 0 {
				t.Errorf("%s received PAUSE during the burst, not reported paused: %+v", name, u)
			}
		default:
			if u.Paused() {
				t.Errorf("%s paused (%+v); its PAUSE frames, if any, came before the burst", name, u)
			}
		}
	}
	if len(p.PathSeries) != 1 || p.PathSeries[0].Tier != "leaf" {
		t.Errorf("path series by tier: %+v, want the leaf tier's (the only ports with tx_bytes)", p.PathSeries)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| p | flow 0 h1→h3 | 100.0 | leaf2:1/0 tx (to h3) | 40.00 | 10.00 | 40.00 | yes |",
		"| p | - | 10.00–20.00 | flow 0 h1→h3 | spine2:2/0 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// Groups carry the tail the papers report: p99.9 and max FCT over
// repetitions.
func TestGroupTailFCT(t *testing.T) {
	t.Parallel()
	m := Manifest{RunID: "r"}
	var rows []FlowRow
	for rep := 1; rep <= 2; rep++ {
		name := "p/rep" + string(rune('0'+rep))
		m.Points = append(m.Points, PointMeta{Name: name, Pattern: "incast", Status: StatusOK, Params: map[string]any{ParamScheme: "x", ParamRepetition: rep},
			StartNs: t0, EndNs: t0 + 300*ms})
		for i := int64(1); i <= 100; i++ {
			rows = append(rows, okRow(name, int(i), "a", "b", 1000, t0, t0+i*int64(rep)*ms))
		}
	}
	s, err := Analyse(&Run{Manifest: m, Flows: rowsSource(rows)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Groups) != 1 || len(s.Groups[0].BySize) == 0 {
		t.Fatalf("groups %+v", s.Groups)
	}
	b := s.Groups[0].BySize[0]
	if b.FCTMax.N != 2 || b.FCTMax.Min != float64(100*ms) || b.FCTMax.Max != float64(200*ms) || b.FCTP999.Max != float64(200*ms) {
		t.Errorf("group max FCT %+v, p99.9 %+v; want 100 ms and 200 ms over the two repetitions", b.FCTMax, b.FCTP999)
	}
}

// The RNIC table shows the counters that grew in some point, n/a where a
// point lacks one, and no row for a point without RNIC counters.
func TestRNICTable(t *testing.T) {
	t.Parallel()
	s := &Summary{Points: []PointSummary{
		{Name: "a", RNIC: map[string]uint64{"out_of_sequence": 3, "np_cnp_sent": 0, "rx_write_requests": 0}},
		{Name: "b", RNIC: map[string]uint64{"np_cnp_sent": 7}},
		{Name: "c"},
	}}
	tb, ok := rnicTable(s)
	if !ok || strings.Join(tb.Header, ",") != "Point,np_cnp_sent,out_of_sequence" || len(tb.Rows) != 2 ||
		strings.Join(tb.Rows[0], ",") != "a,0,3" || strings.Join(tb.Rows[1], ",") != "b,7,n/a" {
		t.Errorf("table %v %v (ok %v)", tb.Header, tb.Rows, ok)
	}
	if _, ok := rnicTable(&Summary{Points: []PointSummary{{Name: "a", RNIC: map[string]uint64{"x": 0}}}}); ok {
		t.Error("a table of counters that never grew")
	}
}
