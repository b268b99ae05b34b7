package fabric

import "math"

// flowHeap orders flows by a time (arrival, or completion), ties by rank,
// so that a run is deterministic. Its items carry their keys and
// ranks, and positions are kept by rank in a flat array: a recompute
// re-times hundreds of completions, and each sift would otherwise visit
// the flows' states.
type flowHeap struct {
	items []flowKeyed
	pos   []int32 // by rank: index in items, while in the heap
	fs    []*flowState
}

type flowKeyed struct {
	key int64
	idx int32
}

func (a flowKeyed) before(b flowKeyed) bool {
	return a.key < b.key || a.key == b.key && a.idx < b.idx
}

// reset empties the heap for a run over fs (by rank).
func (h *flowHeap) reset(fs []*flowState) {
	h.items, h.fs = h.items[:0], fs
	if cap(h.pos) < len(fs) {
		h.pos = make([]int32, len(fs))
	}
	h.pos = h.pos[:len(fs)]
}

// top is the earliest key, MaxInt64 when empty.
func (h *flowHeap) top() int64 {
	if len(h.items) == 0 {
		return math.MaxInt64
	}
	return h.items[0].key
}

// push adds the flow of rank idx at time key.
func (h *flowHeap) push(idx int, key int64) {
	h.items = append(h.items, flowKeyed{key, int32(idx)})
	h.up(len(h.items) - 1)
}

func (h *flowHeap) pop() *flowState {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.pos[h.items[0].idx] = 0
		h.down(0)
	}
	return h.fs[top.idx]
}

// fix moves the flow of rank idx to time key.
func (h *flowHeap) fix(idx int, key int64) {
	i := int(h.pos[idx])
	h.items[i].key = key
	if !h.up(i) {
		h.down(i)
	}
}

func (h *flowHeap) up(i int) bool {
	x := h.items[i]
	start := i
	for i > 0 {
		p := (i - 1) / 2
		if !x.before(h.items[p]) {
			break
		}
		h.items[i] = h.items[p]
		h.pos[h.items[i].idx] = int32(i)
		i = p
	}
	h.items[i] = x
	h.pos[x.idx] = int32(i)
	return i != start
}

func (h *flowHeap) down(i int) {
	x := h.items[i]
	n := len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.items[c+1].before(h.items[c]) {
			c++
		}
		if !h.items[c].before(x) {
			break
		}
		h.items[i] = h.items[c]
		h.pos[h.items[i].idx] = int32(i)
		i = c
	}
	h.items[i] = x
	h.pos[x.idx] = int32(i)
}
