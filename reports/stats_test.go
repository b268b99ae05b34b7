package reports

import (
	"testing"
)

func TestFCTStatsNearestRank(t *testing.T) {
	const ms = int64(1_000_000)
	seq := func(n int, unit int64) []int64 {
		var v []int64
		for i := n; i >= 1; i-- { // added in descending order: Summary must sort
			v = append(v, int64(i)*unit)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		vals []int64
		want FCTSummary
	}{
		{"1..100 ms", seq(100, ms), FCTSummary{Count: 100, Mean: 50.5 * float64(ms), P50: 50 * ms, P95: 95 * ms, P99: 99 * ms, P999: 100 * ms, Max: 100 * ms}},
		{"1..1000", seq(1000, 1), FCTSummary{Count: 1000, Mean: 500.5, P50: 500, P95: 950, P99: 990, P999: 999, Max: 1000}},
		// ceil(0.5*3)=2nd, ceil(0.95*3)=3rd value.
		{"three", []int64{30, 10, 20}, FCTSummary{Count: 3, Mean: 20, P50: 20, P95: 30, P99: 30, P999: 30, Max: 30}},
		{"one", []int64{7}, FCTSummary{Count: 1, Mean: 7, P50: 7, P95: 7, P99: 7, P999: 7, Max: 7}},
		{"none", nil, FCTSummary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s FCTStats
			for _, v := range tc.vals {
				s.Add(v)
			}
			if got := s.Summary(); got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFCTStatsCDF(t *testing.T) {
	var s FCTStats
	for i := 1000; i >= 1; i-- {
		s.Add(int64(i))
	}
	c := s.CDF(10)
	if len(c) != 10 {
		t.Fatalf("%d points, want 10", len(c))
	}
	for k, p := range c {
		// The k-th of 10 evenly spaced ranks is value 100(k+1), with that
		// fraction of the flows at or below it.
		if want := int64(100 * (k + 1)); p.FCTNs != want || p.Frac != float64(want)/1000 {
			t.Errorf("point %d = %+v, want %d at %g", k, p, want, float64(want)/1000)
		}
	}
	if full := s.CDF(5000); len(full) != 1000 || full[0].FCTNs != 1 || full[999].Frac != 1 {
		t.Errorf("undersampled CDF: %d points, first %+v", len(full), full[0])
	}
}
