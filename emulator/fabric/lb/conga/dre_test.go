package conga

import (
	"math"
	"testing"
)

// TestDREEstimatesRateAndDecays feeds a link's estimator a steady rate,
// then leaves it idle: just before a decay x is rate × T_dre/α, just
// after it (1-α) of that, and idle it falls by (1-α) per period.
func TestDREEstimatesRateAndDecays(t *testing.T) {
	t.Parallel()
	const gbps = 100.0
	for _, tc := range []struct {
		name        string
		periodUs    float64
		alpha       float64
		bits        int
		load        float64 // fraction of the link's capacity
		before      int32   // metric just before a decay
		after       int32   // just after it
		idlePeriods int64
	}{
		{"55 % load, ns-3 defaults", 200, 0.2, 3, 0.55, 4, 3, 5},
		{"30 % load, 4 bits", 200, 0.2, 4, 0.3, 4, 3, 3},
		{"overload clamps to 2^Q-1", 200, 0.2, 3, 2, 7, 7, 1},
		{"fast estimator", 20, 0.5, 3, 0.55, 4, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dreConfig{period: int64(tc.periodUs * 1000), keep: 1 - tc.alpha, levels: float64(int(1) << tc.bits)}
			perNs := tc.load * gbps / 8 // bytes per ns
			var d dre
			const step = 80 // ns between packets (whole bytes at these loads)
			periods := int64(60)
			for now := int64(0); now < periods*c.period; now += step {
				d.add(c, now, int32(perNs*step))
			}
			last := periods*c.period - 1
			d.at(c, last)
			want := perNs * c.tau() // rate × tau
			if math.Abs(d.x-want)/want > 1e-3 {
				t.Errorf("before a decay x = %.0f bytes, want rate×tau = %.0f", d.x, want)
			}
			if got := d.metric(c, gbps); got != tc.before {
				t.Errorf("before a decay metric %d, want %d", got, tc.before)
			}
			d.at(c, last+1)
			if math.Abs(d.x-want*c.keep)/want > 1e-3 {
				t.Errorf("after a decay x = %.0f bytes, want %.0f", d.x, want*c.keep)
			}
			if got := d.metric(c, gbps); got != tc.after {
				t.Errorf("after a decay metric %d, want %d", got, tc.after)
			}
			x0 := d.x
			d.at(c, last+1+tc.idlePeriods*c.period)
			if wantIdle := x0 * math.Pow(c.keep, float64(tc.idlePeriods)); math.Abs(d.x-wantIdle) > 1e-6*x0 {
				t.Errorf("after %d idle periods x = %.0f, want %.0f", tc.idlePeriods, d.x, wantIdle)
			}
			d.at(c, last+1+200*c.period)
			if got := d.metric(c, gbps); got != 0 {
				t.Errorf("long idle: metric %d, want 0", got)
			}
		})
	}
}
