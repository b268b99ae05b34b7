package reports

import (
	"math"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// FCTSummary is the FCT distribution of a set of flows, in ns. Count, Mean,
// Min and Max are exact; the percentiles come from a histogram (see hist).
type FCTSummary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   int64   `json:"min"`
	P50   int64   `json:"p50"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// SlowdownSummary is the distribution of FCT slowdowns (FCT over the ideal
// FCT of the flow alone on an idle path; 1 is ideal).
type SlowdownSummary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// CDFPoint says that a fraction Frac of the flows finished within FCTNs.
type CDFPoint struct {
	FCTNs int64   `json:"fct_ns"`
	Frac  float64 `json:"frac"`
}

// Histogram settings. HistSigFigs significant digits: every recorded value
// shares a bucket only with values within 1/1024 (about 0.1 %) of it, so a
// percentile is exact to 3 significant digits. A dense histogram over this
// range takes about 250 KB (FCT) and 170 KB (slowdown) whatever the number
// of flows; a point holds one pair per size bucket plus one overall.
const (
	HistSigFigs = 3
	// fctHistMaxNs is the largest FCT the histogram tells apart (1000 s);
	// longer FCTs count in its top bucket (Max stays exact).
	fctHistMaxNs = 1_000_000_000_000
	// slowdownScale: slowdowns are recorded in thousandths.
	slowdownScale = 1000
	// slowdownHistMax is the largest slowdown told apart (10^6).
	slowdownHistMax = 1_000_000 * slowdownScale
)

// hist is a streaming distribution of non-negative integers: an
// HdrHistogram for the percentiles and exact count, sum, min and max.
// Memory does not grow with the number of values.
//
// Percentiles are nearest-rank: the q-th percentile of n values is the
// value of rank ceil(q*n) in ascending order (1-based), the smallest value
// with at least a fraction q of the values at or below it. hist reports
// the upper edge of that value's histogram bucket, clamped to [min, max],
// so it is never below the true value and above it by at most 1/1024.
type hist struct {
	h        *hdrhistogram.Histogram
	top      int64
	n        int64
	sum      float64
	min, max int64
}

func newHist(top int64) *hist {
	return &hist{h: hdrhistogram.New(1, top, HistSigFigs), top: top}
}

func (s *hist) add(v int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += float64(v)
	_ = s.h.RecordValue(min(max(v, 1), s.top)) // in range by construction
}

// cumulative lists the histogram's populated buckets: each one's upper
// edge (clamped to [min, max]) and the count of values up to it.
func (s *hist) cumulative() (vals, cum []int64) {
	var c int64
	for _, b := range s.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		c += b.Count
		vals = append(vals, min(max(b.To, s.min), s.max))
		cum = append(cum, c)
	}
	return vals, cum
}

// rank is the value of the given 1-based rank.
func rank(vals, cum []int64, r int64) int64 {
	i := sort.Search(len(cum), func(i int) bool { return cum[i] >= r })
	return vals[min(i, len(vals)-1)]
}

// percentiles are the nearest-rank p50, p95, p99 and p99.9, in integer
// arithmetic so that p99 of 100 values is the 99th.
func (s *hist) percentiles() [4]int64 {
	var out [4]int64
	if s.n == 0 {
		return out
	}
	vals, cum := s.cumulative()
	for i, permille := range [4]int64{500, 950, 990, 999} {
		out[i] = rank(vals, cum, max((permille*s.n+999)/1000, 1))
	}
	return out
}

// cdf is the distribution at no more than maxPoints evenly spaced ranks,
// always ending at the maximum, for plotting.
func (s *hist) cdf(maxPoints int) []CDFPoint {
	if s.n == 0 || maxPoints < 1 {
		return nil
	}
	vals, cum := s.cumulative()
	m := min(s.n, int64(maxPoints))
	out := make([]CDFPoint, 0, m)
	for k := int64(1); k <= m; k++ {
		r := (k*s.n + m - 1) / m // rank ceil(k*n/m)
		i := sort.Search(len(cum), func(i int) bool { return cum[i] >= r })
		p := CDFPoint{FCTNs: vals[i], Frac: float64(cum[i]) / float64(s.n)}
		if len(out) > 0 && out[len(out)-1].FCTNs == p.FCTNs {
			out[len(out)-1] = p // one step per bucket
			continue
		}
		out = append(out, p)
	}
	return out
}

// FCTStats accumulates FCTs in ns with memory independent of their number.
type FCTStats struct{ h *hist }

// NewFCTStats makes an empty FCTStats.
func NewFCTStats() *FCTStats { return &FCTStats{newHist(fctHistMaxNs)} }

// Add records one FCT in ns.
func (s *FCTStats) Add(ns int64) { s.h.add(max(ns, 0)) }

// Count is the number of values added.
func (s *FCTStats) Count() int { return int(s.h.n) }

// Summary is the distribution; zero when nothing was added.
func (s *FCTStats) Summary() FCTSummary {
	if s.h.n == 0 {
		return FCTSummary{}
	}
	p := s.h.percentiles()
	return FCTSummary{Count: int(s.h.n), Mean: s.h.sum / float64(s.h.n), Min: s.h.min, P50: p[0], P95: p[1], P99: p[2], P999: p[3], Max: s.h.max}
}

// CDF is the empirical distribution at no more than maxPoints ranks.
func (s *FCTStats) CDF(maxPoints int) []CDFPoint { return s.h.cdf(maxPoints) }

// SlowdownStats accumulates FCT slowdowns. They are kept in thousandths, so
// Min, Max and Mean are exact to 0.001.
type SlowdownStats struct{ h *hist }

// NewSlowdownStats makes an empty SlowdownStats.
func NewSlowdownStats() *SlowdownStats { return &SlowdownStats{newHist(slowdownHistMax)} }

// Add records the slowdown of a flow of FCT fct whose ideal FCT is ideal
// (both ns, ideal > 0).
func (s *SlowdownStats) Add(fct, ideal int64) {
	s.h.add(int64(math.Round(float64(fct) * slowdownScale / float64(ideal))))
}

// Count is the number of values added.
func (s *SlowdownStats) Count() int { return int(s.h.n) }

// Summary is the distribution; zero when nothing was added.
func (s *SlowdownStats) Summary() SlowdownSummary {
	if s.h.n == 0 {
		return SlowdownSummary{}
	}
	p := s.h.percentiles()
	f := func(v int64) float64 { return float64(v) / slowdownScale }
	return SlowdownSummary{Count: int(s.h.n), Mean: s.h.sum / float64(s.h.n) / slowdownScale, Min: f(s.h.min),
		P50: f(p[0]), P95: f(p[1]), P99: f(p[2]), P999: f(p[3]), Max: f(s.h.max)}
}
