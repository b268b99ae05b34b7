package reports

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// color is the line color of the i-th point (a fixed palette, as a
// function so there is no mutable package state).
func color(i int) string {
	p := [...]string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}
	return p[i%len(p)]
}

// plot maps data to SVG coordinates.
type plot struct {
	w, h, left, right, top, bottom float64
	lo, hi                         float64 // x range in us
	logx                           bool
}

func (p plot) x(us float64) float64 {
	f := (us - p.lo) / (p.hi - p.lo)
	if p.logx {
		f = (math.Log10(math.Max(us, p.lo)) - math.Log10(p.lo)) / (math.Log10(p.hi) - math.Log10(p.lo))
	}
	return p.left + f*(p.w-p.left-p.right)
}

func (p plot) y(frac float64) float64 { return p.top + (1-frac)*(p.h-p.top-p.bottom) }

// cdfSVG draws one FCT CDF line per point as an inline SVG (no xmlns, no
// links: the HTML report must stand alone). The x axis is FCT in us,
// logarithmic when the values span more than two decades.
func cdfSVG(cdfs []CDF) string {
	p := plot{w: 760, h: 400, left: 70, right: 190, top: 20, bottom: 50, lo: math.Inf(1)}
	for _, c := range cdfs {
		for _, pt := range c.Points {
			if v := float64(pt.FCTNs) / 1e3; v > 0 {
				p.lo, p.hi = math.Min(p.lo, v), math.Max(p.hi, v)
			}
		}
	}
	if p.hi <= 0 {
		return "<p>No completed flows to plot.</p>"
	}
	p.logx = p.hi/p.lo > 100
	if p.hi == p.lo {
		p.lo, p.hi = p.lo*0.9, p.hi*1.1
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%g" height="%g" viewBox="0 0 %g %g" font-size="12" role="img">`+"\n", p.w, p.h, p.w, p.h)
	axes(&b, p)
	for i, c := range cdfs {
		if len(c.Points) == 0 {
			continue
		}
		pts := []string{xy(p.x(float64(c.Points[0].FCTNs)/1e3), p.y(0))}
		prev := 0.0
		for _, cp := range c.Points {
			x := p.x(float64(cp.FCTNs) / 1e3)
			pts = append(pts, xy(x, p.y(prev)), xy(x, p.y(cp.Frac))) // a step: across, then up
			prev = cp.Frac
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color(i), strings.Join(pts, " "))
		ly := p.top + float64(i)*18
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="14" height="3" fill="%s"/><text x="%g" y="%g">%s</text>`+"\n",
			p.w-p.right+12, ly+6, color(i), p.w-p.right+32, ly+11, html.EscapeString(c.Point))
	}
	b.WriteString("</svg>")
	return b.String()
}

func xy(x, y float64) string { return fmt.Sprintf("%.1f,%.1f", x, y) }

func axes(b *strings.Builder, p plot) {
	x0, x1, y0 := p.left, p.w-p.right, p.y(0)
	fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#000"/>`+"\n", x0, y0, x1, y0)
	fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#000"/>`+"\n", x0, y0, x0, p.y(1))
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1} {
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e5e5e5"/><text x="%g" y="%.1f" text-anchor="end">%g</text>`+"\n",
			x0, p.y(q), x1, p.y(q), x0-6, p.y(q)+4, q)
	}
	for _, v := range ticks(p.lo, p.hi, p.logx) {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#000"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n",
			p.x(v), y0, p.x(v), y0+5, p.x(v), y0+18, tickLabel(v))
	}
	scale := "linear"
	if p.logx {
		scale = "log scale"
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">FCT (µs, %s)</text>`+"\n", (x0+x1)/2, p.h-10, scale)
	mid := (p.top + y0) / 2
	fmt.Fprintf(b, `<text x="18" y="%g" transform="rotate(-90 18 %g)" text-anchor="middle">CDF</text>`+"\n", mid, mid)
}

// ticks are x tick values: decades on a log axis, 1/2/5 steps on a
// linear one.
func ticks(lo, hi float64, logx bool) []float64 {
	var out []float64
	if logx {
		// Decades; with fewer than three in range, 2x and 5x too.
		e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
		for _, mults := range [][]float64{{1}, {1, 2, 5}} {
			out = out[:0]
			for e := e0; e <= e1; e++ {
				for _, m := range mults {
					if v := m * math.Pow(10, float64(e)); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
						out = append(out, v)
					}
				}
			}
			if len(out) >= 3 {
				break
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
	for k := math.Ceil(lo / step); k*step <= hi; k++ {
		out = append(out, k*step)
	}
	return out
}

// tickLabel prints a tick with at most three significant digits and no
// exponent.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
