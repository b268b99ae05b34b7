package reunion

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// sketch is a Count-Min Sketch: depth rows of width counters, each row
// indexed by its own hash of the key. An estimate is the least of the
// key's counters: never below the true count, and above it by more than
// ε·N (N: the sum of all increments) with probability at most δ when
// width = ⌈2/ε⌉ and depth = ⌈log2(1/δ)⌉ (each row overshoots by more
// than ε·N with probability at most 1/2, by Markov's inequality; the rows
// are independent). The paper quotes the same sizing: 2000 entries and 7
// hash functions for ε = 0.001, δ = 0.01.
type sketch struct {
	width, depth int
	c            []uint32 // depth × width
	seeds        []uint64
	total        uint64 // N: increments since the last reset, decayed as the counters are
}

// sketchSize is the width and depth for ε and δ.
func sketchSize(eps, delta float64) (width, depth int) {
	return int(math.Ceil(2 / eps)), max(1, int(math.Ceil(math.Log2(1/delta))))
}

func newSketch(eps, delta float64) *sketch {
	w, d := sketchSize(eps, delta)
	s := &sketch{width: w, depth: d, c: make([]uint32, w*d), seeds: make([]uint64, d)}
	r := lb.NewRand(0x5ce7c4)
	for i := range s.seeds {
		s.seeds[i] = r.Next(uint64(i))
	}
	return s
}

// add counts n for key and returns the key's estimate after it.
func (s *sketch) add(key uint64, n uint32) uint32 {
	est := uint32(math.MaxUint32)
	for i, seed := range s.seeds {
		c := &s.c[i*s.width+int(lb.Mix(key^seed)%uint64(s.width))]
		*c += n
		est = min(est, *c)
	}
	s.total += uint64(n)
	return est
}

// estimate is key's estimate.
func (s *sketch) estimate(key uint64) uint32 {
	est := uint32(math.MaxUint32)
	for i, seed := range s.seeds {
		est = min(est, s.c[i*s.width+int(lb.Mix(key^seed)%uint64(s.width))])
	}
	return est
}

// decay keeps keep/1024 of every counter (0: a reset).
func (s *sketch) decay(keep uint64) {
	if keep >= 1024 {
		return
	}
	if keep == 0 {
		clear(s.c)
		s.total = 0
		return
	}
	for i, c := range s.c {
		s.c[i] = uint32(uint64(c) * keep >> 10)
	}
	s.total = s.total * keep >> 10
}

// hot are the n flows with the largest estimates seen, the elephants
// (the paper's top-N "hot items", N = t × uplinks): a flow whose new
// estimate beats the least of them takes its place.
type hot struct {
	flow []int32
	est  []uint32
	n    int
}

// update records flow's estimate; true if the flow is among the hot.
func (h *hot) update(flow int32, est uint32) bool {
	least := -1
	for i, f := range h.flow {
		if f == flow {
			h.est[i] = est
			return true
		}
		if least < 0 || h.est[i] < h.est[least] {
			least = i
		}
	}
	if len(h.flow) < h.n {
		h.flow, h.est = append(h.flow, flow), append(h.est, est)
		return true
	}
	if least >= 0 && est > h.est[least] {
		h.flow[least], h.est[least] = flow, est
		return true
	}
	return false
}

// decay scales the hot flows' estimates as the sketch's.
func (h *hot) decay(keep uint64) {
	for i, e := range h.est {
		h.est[i] = uint32(uint64(e) * min(keep, 1024) >> 10)
	}
}

func (h *hot) reset() { h.flow, h.est = h.flow[:0], h.est[:0] }
