package reports

import (
	"fmt"
	"html"
	"math"
	"strings"
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// cdfSVG draws one FCT CDF line per point. The x axis (FCT in us) is
// logarithmic when the values span more than two decades.
func cdfSVG(s *Summary) string {
	const w, h, left, right, top, bottom = 720.0, 400.0, 70.0, 170.0, 20.0, 50.0
	lo, hi := math.Inf(1), 0.0
	for _, p := range s.Points {
		if len(p.cdf) > 0 {
			lo = math.Min(lo, float64(p.cdf[0])/1e3)
			hi = math.Max(hi, float64(p.cdf[len(p.cdf)-1])/1e3)
		}
	}
	if hi <= 0 {
		return "<p>No completed flows.</p>"
	}
	lo = math.Max(lo, 1e-3)
	logx := hi/lo > 100
	if hi == lo {
		lo, hi = lo*0.9, hi*1.1
	}
	x := func(v float64) float64 {
		f := (v - lo) / (hi - lo)
		if logx {
			f = (math.Log10(math.Max(v, lo)) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo))
		}
		return left + f*(w-left-right)
	}
	y := func(q float64) float64 { return top + (1-q)*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#000"/>`, left, y(0), w-right, y(0))
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#000"/>`, left, y(0), left, y(1))
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1} {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" text-anchor="end">%g</text>`,
			left, y(q), w-right, y(q), left-6, y(q)+4, q)
	}
	for _, v := range ticks(lo, hi, logx) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#000"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`,
			x(v), y(0), x(v), y(0)+5, x(v), y(0)+18, trimFloat(v))
	}
	scale := "linear"
	if logx {
		scale = "log scale"
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">FCT (us, %s)</text>`, (left+w-right)/2, h-10, scale)
	fmt.Fprintf(&b, `<text x="16" y="%g" transform="rotate(-90 16 %g)" text-anchor="middle">CDF</text>`, (top+h-bottom)/2, (top+h-bottom)/2)
	for i, p := range s.Points {
		if len(p.cdf) == 0 {
			continue
		}
		col := palette[i%len(palette)]
		var pts []string
		n := float64(len(p.cdf))
		for j, v := range p.cdf {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(v)/1e3), y(float64(j)/n), x(float64(v)/1e3), y(float64(j+1)/n)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, col, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<rect x="%g" y="%d" width="12" height="3" fill="%s"/><text x="%g" y="%d">%s</text>`,
			w-right+12, int(top)+i*18+6, col, w-right+30, int(top)+i*18+11, html.EscapeString(p.Name))
	}
	b.WriteString("</svg>")
	return b.String()
}

func ticks(lo, hi float64, logx bool) []float64 {
	var out []float64
	if logx {
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			if v := math.Pow(10, e); v >= lo && v <= hi {
				out = append(out, v)
			}
		}
		return out
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		out = append(out, v)
	}
	return out
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
