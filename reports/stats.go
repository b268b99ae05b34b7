package reports

import (
	"slices"
)

// FCTSummary is the FCT distribution of a set of flows, in ns.
type FCTSummary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// CDFPoint says that a fraction Frac of the flows finished within FCTNs.
type CDFPoint struct {
	FCTNs int64   `json:"fct_ns"`
	Frac  float64 `json:"frac"`
}

// FCTStats accumulates FCTs. It keeps every value, so percentiles are
// exact; callers use only Add, Count, Summary and CDF, so a streaming
// sketch (HdrHistogram) can replace it when runs reach millions of flows.
//
// Percentiles are nearest-rank: the q-th percentile of n values is the
// value of rank ceil(q*n) in ascending order (1-based), i.e. the smallest
// value with at least a fraction q of the values at or below it. It is
// always an observed FCT, never an interpolation.
type FCTStats struct {
	vals   []int64
	sum    float64
	sorted bool
}

// Add records one FCT in ns.
func (s *FCTStats) Add(ns int64) {
	s.vals = append(s.vals, ns)
	s.sum += float64(ns)
	s.sorted = false
}

// Count is the number of values added.
func (s *FCTStats) Count() int { return len(s.vals) }

// Summary is the distribution; zero when nothing was added.
func (s *FCTStats) Summary() FCTSummary {
	n := len(s.vals)
	if n == 0 {
		return FCTSummary{}
	}
	s.sort()
	return FCTSummary{Count: n, Mean: s.sum / float64(n), P50: s.rank(500), P95: s.rank(950), P99: s.rank(990),
		P999: s.rank(999), Max: s.vals[n-1]}
}

// CDF is the empirical distribution at no more than maxPoints ranks
// (evenly spaced, always ending at the maximum), for plotting.
func (s *FCTStats) CDF(maxPoints int) []CDFPoint {
	n := len(s.vals)
	if n == 0 || maxPoints < 1 {
		return nil
	}
	s.sort()
	m := min(n, maxPoints)
	out := make([]CDFPoint, 0, m)
	for k := 1; k <= m; k++ {
		i := (k*n+m-1)/m - 1 // rank ceil(k*n/m), 0-based
		out = append(out, CDFPoint{FCTNs: s.vals[i], Frac: float64(i+1) / float64(n)})
	}
	return out
}

func (s *FCTStats) sort() {
	if !s.sorted {
		slices.Sort(s.vals)
		s.sorted = true
	}
}

// rank is the nearest-rank percentile for q in thousandths, in integer
// arithmetic so that e.g. p99 of 100 values is exactly the 99th.
func (s *FCTStats) rank(permille int) int64 {
	n := len(s.vals)
	r := (permille*n + 999) / 1000
	return s.vals[max(r, 1)-1]
}
