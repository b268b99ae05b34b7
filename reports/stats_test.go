package reports

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// near says a histogram percentile got is the value want to 3 significant
// digits: never below it, above it by at most 1/1024.
func near(got, want int64) bool { return got >= want && got <= want+want/1024+1 }

func TestFCTStatsNearestRank(t *testing.T) {
	const ms = int64(1_000_000)
	seq := func(n int, unit int64) []int64 {
		var v []int64
		for i := n; i >= 1; i-- { // added in descending order
			v = append(v, int64(i)*unit)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		vals []int64
		want FCTSummary
	}{
		{"1..100 ms", seq(100, ms), FCTSummary{Count: 100, Mean: 50.5 * float64(ms), Min: ms, P50: 50 * ms, P95: 95 * ms, P99: 99 * ms, P999: 100 * ms, Max: 100 * ms}},
		// Below 2048 the histogram is exact.
		{"1..1000", seq(1000, 1), FCTSummary{Count: 1000, Mean: 500.5, Min: 1, P50: 500, P95: 950, P99: 990, P999: 999, Max: 1000}},
		// ceil(0.5*3)=2nd, ceil(0.95*3)=3rd value.
		{"three", []int64{30, 10, 20}, FCTSummary{Count: 3, Mean: 20, Min: 10, P50: 20, P95: 30, P99: 30, P999: 30, Max: 30}},
		{"one", []int64{7_000_000}, FCTSummary{Count: 1, Mean: 7e6, Min: 7e6, P50: 7e6, P95: 7e6, P99: 7e6, P999: 7e6, Max: 7e6}},
		{"none", nil, FCTSummary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewFCTStats()
			for _, v := range tc.vals {
				s.Add(v)
			}
			got, w := s.Summary(), tc.want
			if got.Count != w.Count || got.Mean != w.Mean || got.Min != w.Min || got.Max != w.Max {
				t.Errorf("exact fields: got %+v\nwant %+v", got, w)
			}
			for _, p := range [][2]int64{{got.P50, w.P50}, {got.P95, w.P95}, {got.P99, w.P99}, {got.P999, w.P999}} {
				if !near(p[0], p[1]) {
					t.Errorf("percentile %d, want %d to 3 digits\ngot %+v", p[0], p[1], got)
				}
			}
		})
	}
}

// The histogram's percentiles match exact nearest-rank percentiles of a
// random sample to 3 significant digits.
func TestFCTStatsMatchesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := NewFCTStats()
	var vals []int64
	for range 20000 {
		v := int64(r.ExpFloat64()*50_000) + 2000 // FCTs around 50 us
		vals = append(vals, v)
		s.Add(v)
	}
	slices.Sort(vals)
	exact := func(permille int) int64 { return vals[(permille*len(vals)+999)/1000-1] }
	got := s.Summary()
	for _, c := range []struct {
		name     string
		got      int64
		permille int
	}{{"p50", got.P50, 500}, {"p95", got.P95, 950}, {"p99", got.P99, 990}, {"p99.9", got.P999, 999}} {
		if !near(c.got, exact(c.permille)) {
			t.Errorf("%s = %d, exact %d", c.name, c.got, exact(c.permille))
		}
	}
}

func TestSlowdownStats(t *testing.T) {
	s := NewSlowdownStats()
	for i := 1; i <= 100; i++ {
		s.Add(int64(i)*1000, 1000) // slowdowns 1..100
	}
	got := s.Summary()
	if got.Count != 100 || got.Mean != 50.5 || got.Min != 1 || got.Max != 100 {
		t.Errorf("exact fields %+v", got)
	}
	if got.P99 < 99 || got.P99 > 99*1.001 || got.P50 < 50 || got.P50 > 50*1.001 {
		t.Errorf("percentiles %+v", got)
	}
	if (NewSlowdownStats().Summary() != SlowdownSummary{}) {
		t.Error("empty summary not zero")
	}
}

func TestFCTStatsCDF(t *testing.T) {
	s := NewFCTStats()
	for i := 1000; i >= 1; i-- {
		s.Add(int64(i))
	}
	c := s.CDF(10)
	if len(c) != 10 {
		t.Fatalf("%d points, want 10", len(c))
	}
	for k, p := range c {
		// The k-th of 10 evenly spaced ranks is value 100(k+1), with that
		// fraction of the flows at or below it (exact below 2048).
		if want := int64(100 * (k + 1)); p.FCTNs != want || p.Frac != float64(want)/1000 {
			t.Errorf("point %d = %+v, want %d at %g", k, p, want, float64(want)/1000)
		}
	}
	if full := s.CDF(5000); len(full) != 1000 || full[0].FCTNs != 1 || full[999].Frac != 1 {
		t.Errorf("undersampled CDF: %d points, first %+v", len(full), full[0])
	}
}
