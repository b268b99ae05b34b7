package reports

import (
	"math"
	"sort"
)

// FCTSummary is the FCT distribution of a set of flows, in ns.
type FCTSummary struct {
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P95  int64   `json:"p95"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
}

// FCTStats accumulates FCTs. It keeps the values (exact nearest-rank
// percentiles); callers only use Add and Summary, so a streaming sketch can
// replace it when runs reach millions of flows.
type FCTStats struct {
	vals   []int64
	sum    float64
	sorted bool
}

// Add records one FCT.
func (s *FCTStats) Add(ns int64) {
	s.vals = append(s.vals, ns)
	s.sum += float64(ns)
	s.sorted = false
}

// Count is the number of values.
func (s *FCTStats) Count() int { return len(s.vals) }

// Summary computes the distribution (nearest-rank percentiles).
func (s *FCTStats) Summary() FCTSummary {
	if len(s.vals) == 0 {
		return FCTSummary{}
	}
	s.sort()
	return FCTSummary{Mean: s.sum / float64(len(s.vals)), P50: s.rank(0.50), P95: s.rank(0.95), P99: s.rank(0.99),
		P999: s.rank(0.999), Max: s.vals[len(s.vals)-1]}
}

func (s *FCTStats) sort() {
	if !s.sorted {
		sort.Slice(s.vals, func(i, j int) bool { return s.vals[i] < s.vals[j] })
		s.sorted = true
	}
}

// rank is the nearest-rank percentile: the smallest value with at least
// q of the values at or below it.
func (s *FCTStats) rank(q float64) int64 {
	i := int(math.Ceil(q*float64(len(s.vals)))) - 1
	return s.vals[max(i, 0)]
}

// Sorted returns the values in ascending order (for CDF plots).
func (s *FCTStats) Sorted() []int64 { s.sort(); return s.vals }
