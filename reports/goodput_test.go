package reports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
)

// incastRun is an in-memory run of incast points: per scheme, sender
// count n (swept as param "n") and repetition, n flows sharing 1 MB to h9,
// all started at once and ending together after dur(scheme, n, rep) ms;
// plus a failed point, which must not count.
func incastRun(dur func(scheme string, n, rep int) float64, ns ...int) *Run {
	m := Manifest{RunID: "g1", Scenario: "incast-n", Outcome: "partial"}
	var rows []FlowRow
	i := 0
	for _, scheme := range []string{"ecmp", "flb"} {
		for _, n := range ns {
			for rep := 1; rep <= 2; rep++ {
				name := fmt.Sprintf("incast/scheme=%s/n=%d/rep%d", scheme, n, rep)
				start := t0 + int64(i)*100*ms
				end := start + int64(dur(scheme, n, rep)*float64(ms))
				m.Points = append(m.Points, PointMeta{Name: name, Pattern: "incast", Status: StatusOK,
					Params: map[string]any{ParamScheme: scheme, "n": fmt.Sprint(n), ParamRepetition: float64(rep)},
					Hosts:  n + 1, Flows: n, LinkGbps: 40, StartNs: start, EndNs: end})
				for j := 0; j < n; j++ {
					rows = append(rows, rowOf("g1", name, perftest.FlowRecord{FlowID: j, Src: fmt.Sprintf("h%d", j+1), Dst: "h9",
						Bytes: 1_000_000 / int64(n), StartNs: start, EndNs: end, Status: perftest.StatusOK, Tool: "ib_write_bw"}))
				}
				i++
			}
		}
	}
	m.Points = append(m.Points, PointMeta{Name: "incast/scheme=flb/n=8/rep3", Pattern: "incast", Status: StatusFailed, Error: "agent h3: timeout",
		Params: map[string]any{ParamScheme: "flb", "n": "8", ParamRepetition: float64(3)}, Hosts: 9, Flows: 8, LinkGbps: 40,
		StartNs: t0 + int64(i)*100*ms, EndNs: t0 + int64(i)*100*ms + ms})
	return &Run{Manifest: m, Flows: rowsSource(rows), Telemetry: pointsSource(nil)}
}

// TestGoodputVsSenders: each incast point's goodput is the bytes its
// receiver got over first start to last end; the report tabulates and
// plots it per scheme against the sender count, mean [min–max] over
// repetitions, without the failed point, and names the receiver's link.
func TestGoodputVsSenders(t *testing.T) {
	// ecmp slows as n grows (1 ms at n = 2, 2 ms at n = 4), flb does not;
	// the second repetition takes 1.25 times as long.
	dur := func(scheme string, n, rep int) float64 {
		d := 1.0
		if scheme == "ecmp" {
			d = float64(n) / 2
		}
		if rep == 2 {
			d *= 1.25
		}
		return d
	}
	s, err := Analyse(incastRun(dur, 2, 4))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Points {
		if p.Status == StatusOK && (p.Senders != p.Flows || p.LinkGbps != 40) {
			t.Errorf("%s: senders %d, link %g; want %d and 40", p.Name, p.Senders, p.LinkGbps, p.Flows)
		}
	}
	tabs := goodputTables(s)
	if len(tabs) != 1 {
		t.Fatalf("%d goodput tables, want 1", len(tabs))
	}
	tab := tabs[0]
	// 1 MB in 1 ms is 8 Gb/s, in 1.25 ms 6.4; in 2 ms 4, in 2.5 ms 3.2.
	want := [][]string{{"Scheme", "N=2", "N=4"}, {"ecmp", "7.20 [6.40–8.00]", "3.60 [3.20–4.00]"}, {"flb", "7.20 [6.40–8.00]", "7.20 [6.40–8.00]"}}
	got := append([][]string{tab.Header}, tab.Rows...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("goodput table\n%v\nwant\n%v", got, want)
	}
	if !strings.Contains(tab.Note, "40.00 Gb/s") || !strings.Contains(tab.Note, "bytes delivered to the receiver") {
		t.Errorf("note %q: want the definition and the receiver's link", tab.Note)
	}
	figs, err := goodputPlots(s)
	if err != nil || len(figs) != 1 || !strings.Contains(string(figs[0].SVG), "<svg") {
		t.Fatalf("goodput plot: %d figures, %v", len(figs), err)
	}
	for _, l := range []string{"ecmp", "flb", "senders (N)"} {
		if !strings.Contains(string(figs[0].SVG), l) {
			t.Errorf("plot lacks %q", l)
		}
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil || !strings.Contains(md.String(), "## Incast goodput (Gb/s) vs senders") {
		t.Errorf("markdown lacks the goodput table (%v)", err)
	}

	// One sender count: nothing to plot against.
	one, err := Analyse(incastRun(dur, 4))
	if err != nil {
		t.Fatal(err)
	}
	if tabs := goodputTables(one); tabs != nil {
		t.Errorf("one sender count gave %d tables", len(tabs))
	}
}
