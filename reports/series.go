package reports

import (
	"fmt"
	"math"
	"sort"
)

// seriesQueues is how many queues (the deepest) a point's queue-depth
// plot shows.
const seriesQueues = 4

// timeWeightedMean is the mean of a sampled quantity held at each
// sample's value until the next sample (samples sorted by time); one
// sample is its own mean.
func timeWeightedMean(s []sample) float64 {
	if len(s) == 0 {
		return 0
	}
	span := s[len(s)-1].ts - s[0].ts
	if span <= 0 {
		var sum float64
		for _, x := range s {
			sum += float64(x.v)
		}
		return sum / float64(len(s))
	}
	var area float64
	for i := 0; i+1 < len(s); i++ {
		area += float64(s[i].v) * float64(s[i+1].ts-s[i].ts)
	}
	return area / float64(span)
}

// sortSamples orders samples by time, keeping the read order of samples
// with one timestamp so the means over them do not vary between runs.
func sortSamples(s []sample) { sort.SliceStable(s, func(i, j int) bool { return s[i].ts < s[j].ts }) }

// finishQueues sets the per-queue peaks and time-weighted means, the
// point's peak, its mean queue depth (the mean over the queues that were
// ever non-empty of their time-weighted means) and the depth series of the
// deepest queues.
func (a *acc) finishQueues(ps *PointSummary, w window, seriesPoints int) {
	busy, busySum := 0, 0.0
	samples := map[PortPeak][]sample{}
	for k, q := range a.queues {
		sortSamples(q.samples)
		pp := PortPeak{Device: k.device, Port: k.port, Queue: k.queue, Watermark: q.watermark, MeanBytes: timeWeightedMean(q.samples)}
		for _, s := range q.samples {
			pp.Bytes = max(pp.Bytes, s.v)
		}
		ps.PeakQueues = append(ps.PeakQueues, pp)
		ps.PeakQueueBytes = max(ps.PeakQueueBytes, pp.Bytes)
		ps.PeakWatermarkBytes = max(ps.PeakWatermarkBytes, pp.Watermark)
		samples[pp] = q.samples
	}
	sort.Slice(ps.PeakQueues, func(i, j int) bool {
		x, y := ps.PeakQueues[i], ps.PeakQueues[j]
		if x.Bytes != y.Bytes {
			return x.Bytes > y.Bytes
		}
		if x.Device != y.Device {
			return x.Device < y.Device
		}
		if x.Port != y.Port {
			return x.Port < y.Port
		}
		return x.Queue < y.Queue
	})
	// Summed in the sorted order, not the map's: float addition is not
	// associative, and the report must be the same bytes every time.
	for _, pp := range ps.PeakQueues {
		if pp.Bytes > 0 {
			busy++
			busySum += pp.MeanBytes
		}
	}
	if busy > 0 {
		ps.MeanQueueBytes = busySum / float64(busy)
	}
	for i, pp := range ps.PeakQueues {
		if i == seriesQueues || pp.Bytes == 0 {
			break
		}
		b := newBins(w, seriesPoints)
		for _, s := range samples[pp] {
			b.max(s.ts, float64(s.v)/1024)
		}
		ps.QueueSeries = append(ps.QueueSeries, b.series(fmt.Sprintf("%s %s q%s (KiB)", pp.Device, pp.Port, pp.Queue)))
	}
}

// pauseSeries is, per tier, the pause frames sent per second in each time
// bin of the window: each counter's increase between two samples counts in
// the bin of the later one.
func (a *acc) pauseSeries(w window, seriesPoints int) []Series {
	byTier := map[string]*bins{}
	for k, c := range a.counters {
		s := c.pause
		if len(s) == 0 {
			continue
		}
		sortSamples(s)
		prev := c.before
		if c.has&hasBefore == 0 {
			prev, s = s[0], s[1:]
		}
		for _, x := range s {
			if x.v > prev.v { // a reset (x.v < prev.v) gives no increase
				b, ok := byTier[k.tier]
				if !ok {
					b = newBins(w, seriesPoints)
					byTier[k.tier] = b
				}
				b.add(x.ts, float64(x.v-prev.v))
			}
			prev = x
		}
	}
	var out []Series
	for t, b := range byTier {
		for i := range b.v {
			b.v[i] /= float64(b.width) / 1e9 // frames per second
		}
		b.fillZeros()
		out = append(out, b.series(t))
	}
	sort.Slice(out, func(i, j int) bool { return tierLess(out[i].Name, out[j].Name) })
	return out
}

// bins divides a window into equal time bins.
type bins struct {
	start, width int64
	v            []float64
	set          []bool
}

func newBins(w window, n int) *bins {
	n = max(n, 1)
	width := max((w.end-w.start+int64(n))/int64(n), 1)
	return &bins{start: w.start, width: width, v: make([]float64, n), set: make([]bool, n)}
}

func (b *bins) index(ts int64) int {
	return min(max(int((ts-b.start)/b.width), 0), len(b.v)-1)
}

func (b *bins) max(ts int64, v float64) {
	i := b.index(ts)
	if !b.set[i] || v > b.v[i] {
		b.v[i] = v
	}
	b.set[i] = true
}

func (b *bins) add(ts int64, v float64) {
	i := b.index(ts)
	b.v[i] += v
	b.set[i] = true
}

// fillZeros marks every bin set: for rates, an empty bin is a zero rate.
func (b *bins) fillZeros() {
	for i := range b.set {
		b.set[i] = true
	}
}

// series lists the set bins at their centres.
func (b *bins) series(name string) Series {
	s := Series{Name: name}
	for i, ok := range b.set {
		if ok && !math.IsNaN(b.v[i]) {
			s.T = append(s.T, b.start+int64(i)*b.width+b.width/2)
			s.V = append(s.V, b.v[i])
		}
	}
	return s
}
