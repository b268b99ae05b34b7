package reports

// Rates from cumulative byte counters. A counter is sampled every
// telemetry interval; between two consecutive samples it grew by dv over
// dt, and that growth is spread evenly over [t0, t1]: a bin or period
// that covers part of the interval gets that part of dv. A counter that
// went down (a device restart) leaves its interval unknown rather than
// counting a negative or a whole counter's worth of bytes; a bin no
// interval covers is unknown, not zero.

// increases calls f with each interval between consecutive samples (s
// sorted by time) and the counter's growth over it; intervals across a
// reset and of zero length are skipped.
func increases(s []sample, f func(t0, t1 int64, dv float64)) {
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if b.ts <= a.ts || b.v < a.v {
			continue
		}
		f(a.ts, b.ts, float64(b.v-a.v))
	}
}

// overlap is the length of [a0, a1] ∩ [b0, b1].
func overlap(a0, a1, b0, b1 int64) int64 { return max(min(a1, b1)-max(a0, b0), 0) }

// meanGbps is a byte counter's mean rate over [from, to] in Gb/s: the
// bytes the covered intervals attribute to it over the time they cover.
// ok is false when known intervals cover less than half of it (too few
// samples, or a reset), so that a period is never judged on a sliver.
func meanGbps(s []sample, from, to int64) (gbps float64, ok bool) {
	if to <= from {
		return 0, false
	}
	var bytes float64
	var covered int64
	increases(s, func(t0, t1 int64, dv float64) {
		if o := overlap(t0, t1, from, to); o > 0 {
			bytes += dv * float64(o) / float64(t1-t0)
			covered += o
		}
	})
	if 2*covered < to-from {
		return 0, false
	}
	return bytes * 8 / float64(covered), true // bits per ns = Gb/s
}

// rateBins is a byte counter's rate in Gb/s per time bin of b (whose
// values it sets): each bin's bytes over the time known intervals cover
// in it; a bin they cover less than half of stays unset, as meanGbps.
func rateBins(s []sample, b *bins) {
	covered := make([]int64, len(b.v))
	increases(s, func(t0, t1 int64, dv float64) {
		for i := b.index(t0); i < len(b.v); i++ {
			lo := b.start + int64(i)*b.width
			if lo >= t1 {
				break
			}
			if o := overlap(t0, t1, lo, lo+b.width); o > 0 {
				b.v[i] += dv * float64(o) / float64(t1-t0)
				covered[i] += o
			}
		}
	})
	for i, c := range covered {
		if 2*c >= b.width {
			b.v[i] = b.v[i] * 8 / float64(c)
			b.set[i] = true
		} else {
			b.v[i] = 0
		}
	}
}

// binsFor are the bins of a window for a counter sampled every interval
// ns: one per interval, at most limit (0: no interval known, limit bins).
func binsFor(w window, interval int64, limit int) *bins {
	n := limit
	if interval > 0 {
		n = min(n, int((w.end-w.start+interval-1)/interval))
	}
	return newBins(w, n)
}
