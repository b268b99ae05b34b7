package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plots are drawn with gonum/plot's SVG backend: it brings axes, ticks
// (log ticks too), legends and error bars that a hand-written SVG would
// have to grow one by one. Fonts are not embedded (the viewer's own are
// used), so each plot is a few tens of KB of plain SVG inlined into the
// HTML.

// figure is one plot of the HTML report.
type figure struct {
	Title string
	SVG   template.HTML
}

// svgHeader is what vgsvg writes before the <svg> element and the
// namespace attributes, which inline SVG in HTML does not need.
var svgHeader = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?|\s*xmlns(:xlink)?="[^"]*"`)

func render(p *plot.Plot, title string) (figure, error) {
	c := vgsvg.New(7*vg.Inch, 4*vg.Inch)
	// A right margin: the viewer's font may be wider than the metrics
	// gonum laid the last tick label and the legend out with.
	p.Draw(draw.Crop(draw.New(c), 0, -vg.Points(24), 0, 0))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return figure{}, fmt.Errorf("plot %s: %w", title, err)
	}
	return figure{Title: title, SVG: template.HTML(svgHeader.ReplaceAllString(b.String(), ""))}, nil // gonum escapes the text it prints
}

// addFigure renders a plot whose axis is logarithmic when vals span more
// than two decades, and appends it to out.
func addFigure(out *[]figure, p *plot.Plot, title string, axis *plot.Axis, vals []float64) error {
	logAxis(axis, vals)
	f, err := render(p, title)
	if err == nil {
		*out = append(*out, f)
	}
	return err
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(4)
	p.Add(plotter.NewGrid())
	return p
}

// logAxis makes an axis logarithmic when its positive values span more
// than two decades.
func logAxis(a *plot.Axis, vals []float64) {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi > 0 && hi/lo > 100 {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.LogTicks{Prec: -1}
		a.Label.Text += " (log scale)"
	}
}

// spreadLine is a line of group means with min..max error bars.
type spreadLine struct {
	plotter.XYs
	lo, hi []float64
}

func (s spreadLine) YError(i int) (float64, float64) {
	return s.XYs[i].Y - s.lo[i], s.hi[i] - s.XYs[i].Y
}

func addLine(p *plot.Plot, i int, name string, l spreadLine, dashed bool) error {
	lp, pts, err := plotter.NewLinePoints(l.XYs)
	if err != nil {
		return err
	}
	lp.Color, pts.Color, pts.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
	if dashed {
		lp.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(lp, pts)
	p.Legend.Add(name, lp, pts)
	if l.lo != nil {
		eb, err := plotter.NewYErrorBars(l)
		if err != nil {
			return err
		}
		eb.Color = plotutil.Color(i)
		p.Add(eb)
	}
	return nil
}

// lineLabel names a group's line: its scheme and the parameters that the
// plot does not already fix.
func lineLabel(g Group, fixed ...string) string {
	parts := []string{g.Scheme}
	for _, kv := range strings.Fields(g.Condition) {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(fixed, k) {
			parts = append(parts, kv)
		}
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

func loadStr(l float64) string { return strconv.FormatFloat(l, 'g', -1, 64) }

// fctVsLoad: per workload, avg and p99 FCT against load, a line per
// scheme (and setting), with min..max over repetitions as error bars.
func fctVsLoad(gs []Group) ([]figure, error) {
	lines := map[string]map[string][]Group{} // workload -> line -> groups
	var workloads []string
	for _, g := range gs {
		if g.Load == 0 || g.Scheme == "" || g.OK == 0 || len(g.BySize) == 0 || g.BySize[0].Bucket != "all" {
			continue
		}
		if lines[g.Workload] == nil {
			lines[g.Workload] = map[string][]Group{}
			workloads = append(workloads, g.Workload)
		}
		l := lineLabel(g, ParamLoad, ParamWorkload)
		lines[g.Workload][l] = append(lines[g.Workload][l], g)
	}
	var out []figure
	for _, w := range workloads {
		names := sortedKeys(lines[w])
		for _, m := range []struct {
			title string
			pick  func(GroupBucket) Spread
		}{{"avg FCT", func(b GroupBucket) Spread { return b.FCTMean }}, {"p99 FCT", func(b GroupBucket) Spread { return b.FCTP99 }}} {
			title := m.title + " vs load"
			if w != "" {
				title += " (" + w + ")"
			}
			p := newPlot(title, "load", m.title+" (µs)")
			var all []float64
			for i, name := range names {
				g := lines[w][name]
				sort.Slice(g, func(a, b int) bool { return g[a].Load < g[b].Load })
				var l spreadLine
				for _, x := range g {
					s := m.pick(x.BySize[0])
					l.XYs = append(l.XYs, plotter.XY{X: x.Load, Y: s.Mean / 1e3})
					l.lo, l.hi = append(l.lo, s.Min/1e3), append(l.hi, s.Max/1e3)
					all = append(all, s.Min/1e3, s.Max/1e3)
				}
				if err := addLine(p, i, name, l, false); err != nil {
					return nil, err
				}
			}
			if err := addFigure(&out, p, title, &p.Y, all); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// slowdownBySize: per condition, avg (solid) and p99 (dashed) slowdown
// over the flows of all repetitions, a line per scheme, in the log-spaced
// size bins that hold flows (sizebins.go); each x label says how many
// flows its bin holds (all schemes).
func slowdownBySize(s *Summary) ([]figure, error) {
	type line struct {
		scheme string
		bins   sizeBins
	}
	var conds []string
	byCond := map[string][]*line{}
	for _, p := range s.Points {
		if p.Status == StatusFailed || len(p.SizeBins) == 0 {
			continue
		}
		_, c := GroupKeys(p)
		ls, ok := byCond[c]
		if !ok {
			conds = append(conds, c)
		}
		i := slices.IndexFunc(ls, func(l *line) bool { return l.scheme == p.Scheme })
		if i < 0 {
			ls = append(ls, &line{scheme: p.Scheme, bins: sizeBins{}})
			i = len(ls) - 1
			byCond[c] = ls
		}
		ls[i].bins.merge(p.SizeBins)
	}
	var out []figure
	for _, c := range conds {
		// the condition's bins: those that hold a flow of some scheme
		all := sizeBins{}
		for _, l := range byCond[c] {
			all.merge(l.bins.list())
		}
		axis := all.list()
		if len(axis) < 2 {
			continue // one bin: nothing by size
		}
		// a bin runs from its size to the next one's: its lower end names
		// it, short enough that a dozen bins' labels do not overlap
		var names []string
		for i, b := range axis {
			name := sizeName(b.Lo)
			if i+1 == len(axis) {
				name = ">=" + name
			}
			names = append(names, fmt.Sprintf("%s\nn=%d", name, b.Flows()))
		}
		title := "FCT slowdown by flow size (" + c + ")"
		p := newPlot(title, "flow size, from each label to the next (n: flows in the bin)", "slowdown (ideal FCT includes the base round trip)")
		p.NominalX(names...)
		var vals []float64
		for i, l := range byCond[c] {
			for _, m := range []struct {
				name   string
				dashed bool
				pick   func(SizeBin) float64
			}{{"avg", false, SizeBin.mean}, {"p99", true, SizeBin.p99}} {
				var sl spreadLine
				for _, b := range l.bins.list() {
					x := slices.IndexFunc(axis, func(a SizeBin) bool { return a.Lo == b.Lo })
					sl.XYs = append(sl.XYs, plotter.XY{X: float64(x), Y: m.pick(b)})
					vals = append(vals, m.pick(b))
				}
				if err := addLine(p, i, cmp.Or(l.scheme, "run")+" "+m.name, sl, m.dashed); err != nil {
					return nil, err
				}
			}
		}
		if err := addFigure(&out, p, title, &p.Y, vals); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cdfPlots: per condition, the FCT CDF of each of its points.
func cdfPlots(s *Summary) ([]figure, error) {
	var conds []string
	byCond := map[string][]int{}
	for i, p := range s.Points {
		if len(p.CDF) == 0 {
			continue
		}
		_, c := GroupKeys(p)
		if len(p.Params) == 0 && p.Scheme == "" {
			c = "" // a run without a matrix: one plot of all its points
		}
		if _, ok := byCond[c]; !ok {
			conds = append(conds, c)
		}
		byCond[c] = append(byCond[c], i)
	}
	var out []figure
	for _, c := range conds {
		title := "FCT CDF"
		if c != "" {
			title += " (" + c + ")"
		}
		p := newPlot(title, "FCT (µs)", "fraction of flows")
		var all []float64
		for k, i := range byCond[c] {
			pt := s.Points[i]
			var xy plotter.XYs
			prev := 0.0
			for _, cp := range pt.CDF {
				x := float64(cp.FCTNs) / 1e3
				xy = append(xy, plotter.XY{X: x, Y: prev}, plotter.XY{X: x, Y: cp.Frac}) // a step: across, then up
				prev = cp.Frac
				all = append(all, x)
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color = plotutil.Color(k)
			p.Add(l)
			p.Legend.Add(cdfLabel(pt, c), l)
		}
		p.Legend.Top, p.Legend.Left = false, false // a CDF leaves the bottom right empty
		p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(20)
		p.Y.Min, p.Y.Max = 0, 1
		if err := addFigure(&out, p, title, &p.X, all); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cdfLabel names a point's CDF line: its scheme and repetition when the
// plot is of one condition, else its name.
func cdfLabel(p PointSummary, cond string) string {
	if cond == "" || p.Scheme == "" {
		return pointName(p)
	}
	if r, ok := p.Params[ParamRepetition]; ok {
		return fmt.Sprintf("%s rep %v", p.Scheme, r)
	}
	if p.Run != "" {
		return p.Scheme + " (" + p.Run + ")"
	}
	return p.Scheme
}

// seriesPlot draws a point's time series (queue depth or pause rate)
// against ms since the point's start; nil when there is nothing to draw.
func seriesPlot(title, ylabel string, start int64, ss []Series) (*figure, error) {
	return seriesPlotRoom(title, ylabel, start, ss, false)
}

// seriesPlotRoom is seriesPlot with, when room is set, the y axis from 0
// and headroom above the highest value for the legend, which otherwise
// hides lines that run at the top (links at line rate).
func seriesPlotRoom(title, ylabel string, start int64, ss []Series, room bool) (*figure, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	p := newPlot(title, "time since the point's start (ms)", ylabel)
	if room {
		top := 0.0
		for _, s := range ss {
			for _, v := range s.V {
				top = math.Max(top, v)
			}
		}
		p.Y.Min, p.Y.Max = 0, math.Max(top, 1e-9)*(1.1+0.08*float64(len(ss)))
	}
	for i, s := range ss {
		var xy plotter.XYs
		for j := range s.T {
			xy = append(xy, plotter.XY{X: float64(s.T[j]-start) / 1e6, Y: s.V[j]})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	f, err := render(p, title)
	return &f, err
}

// CurveSVG draws one measured curve (y against x, points joined) with a
// dashed horizontal line at limit, labelled limitLabel, as inline SVG:
// the capacity report's SLO metric against load.
func CurveSVG(title, xLabel, yLabel string, xs, ys []float64, limit float64, limitLabel string) (template.HTML, error) {
	p := newPlot(title, xLabel, yLabel)
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i].X, xy[i].Y = xs[i], ys[i]
	}
	if err := addLine(p, 0, yLabel, spreadLine{XYs: xy}, false); err != nil {
		return "", err
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if err := addLine(p, 1, limitLabel, spreadLine{XYs: plotter.XYs{{X: lo, Y: limit}, {X: hi, Y: limit}}}, true); err != nil {
		return "", err
	}
	var fs []figure
	if err := addFigure(&fs, p, title, &p.Y, append(append([]float64(nil), ys...), limit)); err != nil {
		return "", err
	}
	return fs[0].SVG, nil
}
