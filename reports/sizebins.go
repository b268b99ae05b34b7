package reports

import (
	"math"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The slowdown-by-size plot's own bins. The summary's size buckets are the
// user's (--buckets, the papers' three by default) and may hold no flow of
// a workload at all; the plot instead bins every flow by size at 1x and 3x
// each power of ten (1KB, 3KB, 10KB, 30KB, ...: log-spaced, with names
// that read well), keeps only the bins that hold flows, and stretches each
// to the next one that does, so an empty bin merges into the one below
// it and the axis has no holes.

// sizeBinSigFigs: two significant digits for the bins' p99 (within 1%,
// plenty for a plot) keep a bin's histogram at tens of KB.
const sizeBinSigFigs = 2

// SizeBin is the slowdowns of the completed flows of sizes from Lo bytes
// (inclusive) up to the next bin's Lo. Plot data only.
type SizeBin struct {
	Lo int64
	h  *hist
}

// Flows is the number of flows in the bin.
func (b SizeBin) Flows() int { return int(b.h.n) }

// binLow is the lower edge of size's bin: the largest 1x or 3x power of
// ten at or below it.
func binLow(size int64) int64 {
	p := int64(1)
	for p <= math.MaxInt64/10 {
		switch {
		case size < 3*p:
			return p
		case size < 10*p:
			return 3 * p
		}
		p *= 10
	}
	return p
}

// sizeBins accumulates a point's slowdowns by binLow.
type sizeBins map[int64]*hist

func (s sizeBins) add(size, fct, ideal int64) {
	lo := binLow(max(size, 1))
	h, ok := s[lo]
	if !ok {
		h = &hist{h: hdrhistogram.New(1, slowdownHistMax, sizeBinSigFigs), top: slowdownHistMax}
		s[lo] = h
	}
	h.add(int64(math.Round(float64(fct) * slowdownScale / float64(ideal))))
}

// list is the bins in size order.
func (s sizeBins) list() []SizeBin {
	var out []SizeBin
	for lo, h := range s {
		out = append(out, SizeBin{Lo: lo, h: h})
	}
	slices.SortFunc(out, func(a, b SizeBin) int { return int(min(max(a.Lo-b.Lo, -1), 1)) })
	return out
}

// merge adds bins (of another repetition) into s.
func (s sizeBins) merge(bins []SizeBin) {
	for _, b := range bins {
		h, ok := s[b.Lo]
		if !ok {
			h = &hist{h: hdrhistogram.New(1, slowdownHistMax, sizeBinSigFigs), top: slowdownHistMax}
			s[b.Lo] = h
		}
		h.h.Merge(b.h.h)
		if h.n == 0 || b.h.min < h.min {
			h.min = b.h.min
		}
		h.max = max(h.max, b.h.max)
		h.n += b.h.n
		h.sum += b.h.sum
	}
}

// mean and p99 of a bin's slowdowns.
func (b SizeBin) mean() float64 { return b.h.sum / float64(b.h.n) / slowdownScale }
func (b SizeBin) p99() float64  { return float64(b.h.percentiles()[2]) / slowdownScale }
