package hf2t

import "math/bits"

// gapHist is a distribution of gaps in ns, in log-linear bins: exact below
// 16 ns, then 16 bins per octave (each about 4.4 % wide), fixed in size so
// that recording allocates nothing.
type gapHist struct {
	n    uint64
	bins [16 + 60*16]uint64
}

func gapBin(g int64) int {
	if g < 16 {
		return int(max(g, 0))
	}
	e := bits.Len64(uint64(g)) - 1 // >= 4
	sub := int(g>>(e-4)) & 15
	return 16 + (e-4)*16 + sub
}

// binEnd is the first gap above bin b.
func binEnd(b int) int64 {
	if b < 16 {
		return int64(b) + 1
	}
	e, sub := (b-16)/16+4, (b-16)%16
	return int64(16+sub+1) << (e - 4)
}

func (h *gapHist) add(g int64) {
	h.n++
	h.bins[gapBin(g)]++
}

// tail is the smallest bin edge with at least pct % of the gaps below it:
// the gaps at or above it are at most 100 - pct % of all (fewer when one
// bin holds the percentile and more, as a NIC pacing at one rate makes
// most gaps equal).
func (h *gapHist) tail(pct float64) int64 {
	want := uint64(pct / 100 * float64(h.n))
	var cum uint64
	for b, c := range h.bins {
		cum += c
		if cum > 0 && cum >= want {
			return binEnd(b)
		}
	}
	return binEnd(len(h.bins) - 1)
}
