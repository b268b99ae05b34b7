package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
)

// Incast goodput against the number of senders (FLB's Fig. 16): each
// incast point's goodput is the bytes its receiver got over the incast's
// duration, first start to last end of its flows (PointSummary.GoodputGbps
// for a non-workload point); a run that sweeps the sender count gets a
// table and a plot of it, a line per scheme and setting, min..max over
// repetitions.

// goodputNote defines the figure wherever it is printed.
const goodputNote = "Goodput = bytes delivered to the receiver ÷ the incast's duration (first flow start to last flow end)."

// goodputLine is one scheme's (and setting's) goodput per sender count.
type goodputLine struct {
	Label string
	N     []int    // ascending
	Gbps  []Spread // over the points with that N
}

// goodputVsN groups the completed incast points by line and sender count;
// nil unless they have at least two sender counts. linkGbps is the
// receivers' link rate (0 when the points disagree or lack it).
func goodputVsN(s *Summary) (lines []goodputLine, linkGbps float64) {
	var pts []PointSummary
	ns := map[int]bool{}
	for _, p := range s.Points {
		if p.Pattern == "incast" && p.Status == StatusOK && p.Senders > 0 && p.FCT.Count > 0 {
			pts = append(pts, p)
			ns[p.Senders] = true
		}
	}
	if len(ns) < 2 {
		return nil, 0
	}
	axis := nAxisParams(pts)
	vals := map[string]map[int][]float64{}
	var order []string
	for i, p := range pts {
		l := goodputLabel(p, axis)
		if vals[l] == nil {
			vals[l] = map[int][]float64{}
			order = append(order, l)
		}
		vals[l][p.Senders] = append(vals[l][p.Senders], p.GoodputGbps)
		switch {
		case i == 0:
			linkGbps = p.LinkGbps
		case p.LinkGbps != linkGbps:
			linkGbps = -1
		}
	}
	for _, l := range order {
		gl := goodputLine{Label: l}
		for n := range vals[l] {
			gl.N = append(gl.N, n)
		}
		slices.Sort(gl.N)
		for _, n := range gl.N {
			gl.Gbps = append(gl.Gbps, SpreadOf(vals[l][n]))
		}
		lines = append(lines, gl)
	}
	return lines, max(linkGbps, 0)
}

// nAxisParams are the parameters that name the sender count (a sweep of
// the incast entry labelled "25", "50", ...): each of their values goes
// with one sender count. They, the scheme and the repetition are left out
// of line labels.
func nAxisParams(pts []PointSummary) map[string]bool {
	seen := map[string]map[string]int{} // param -> value -> senders (-1: several)
	for _, p := range pts {
		for k, v := range p.Params {
			if seen[k] == nil {
				seen[k] = map[string]int{}
			}
			val := fmt.Sprint(v)
			if n, ok := seen[k][val]; ok && n != p.Senders {
				seen[k][val] = -1
			} else if !ok {
				seen[k][val] = p.Senders
			}
		}
	}
	out := map[string]bool{}
	for k, byVal := range seen {
		one := len(byVal) > 1
		for _, n := range byVal {
			one = one && n >= 0
		}
		out[k] = one
	}
	return out
}

// goodputLabel names a point's line: its run (in a comparison), scheme,
// and the parameters that neither name N nor a repetition.
func goodputLabel(p PointSummary, axis map[string]bool) string {
	var parts []string
	if p.Run != "" {
		parts = append(parts, p.Run)
	}
	parts = append(parts, cmpDash(p.Scheme))
	var rest []string
	for k, v := range p.Params {
		if k != ParamScheme && !repetitionParam(k) && !axis[k] {
			rest = append(rest, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), " ")
}

// goodputTables is the goodput-vs-senders table, a row per line and a
// column per sender count; none without a sweep of the sender count.
func goodputTables(s *Summary) []table {
	lines, link := goodputVsN(s)
	if lines == nil {
		return nil
	}
	var ns []int
	for _, l := range lines {
		for _, n := range l.N {
			if !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	note := goodputNote
	if link > 0 {
		note += fmt.Sprintf(" The receiver's link is %s Gb/s.", gbps(link))
	}
	t := table{Title: "Incast goodput (Gb/s) vs senders", Note: note, Header: []string{"Scheme"}}
	for _, n := range ns {
		t.Header = append(t.Header, fmt.Sprintf("N=%d", n))
	}
	for _, l := range lines {
		row := []string{l.Label}
		for _, n := range ns {
			cell := na
			if i := slices.Index(l.N, n); i >= 0 {
				cell = spread(l.Gbps[i], gbps)
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return []table{t}
}

// goodputPlots draws goodput against the sender count, a line per scheme
// with min..max over repetitions as error bars.
func goodputPlots(s *Summary) ([]figure, error) {
	lines, _ := goodputVsN(s)
	if lines == nil {
		return nil, nil
	}
	const title = "Incast goodput vs senders"
	p := newPlot(title, "senders (N)", "goodput (Gb/s)")
	for i, l := range lines {
		var sl spreadLine
		for j, n := range l.N {
			g := l.Gbps[j]
			sl.XYs = append(sl.XYs, plotter.XY{X: float64(n), Y: g.Mean})
			sl.lo, sl.hi = append(sl.lo, g.Min), append(sl.hi, g.Max)
		}
		if err := addLine(p, i, l.Label, sl, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	f, err := render(p, title)
	if err != nil {
		return nil, err
	}
	return []figure{f}, nil
}
