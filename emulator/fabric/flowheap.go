package fabric

import "math"

// flowHeap orders flows by a time (arrival, or completion), ties by rank,
// so that a run is deterministic. An item is known by an id: the flow's
// rank in the heap of arrivals, its active slot in the heap of
// completions (slots are dense, so its positions stay in a small array
// however many flows the run has). Items carry their keys and ranks: a
// recompute re-times hundreds of completions, and each sift would
// otherwise visit the flows' states.
type flowHeap struct {
	items []flowKeyed
	pos   []int32 // by id: index in items, while in the heap
}

type flowKeyed struct {
	key      int64
	rank, id int32
}

func (a flowKeyed) before(b flowKeyed) bool {
	return a.key < b.key || a.key == b.key && a.rank < b.rank
}

// reset empties the heap for ids below n.
func (h *flowHeap) reset(n int) {
	h.items = h.items[:0]
	if cap(h.pos) < n {
		h.pos = make([]int32, n)
	}
	h.pos = h.pos[:n]
}

// top is the earliest key, MaxInt64 when empty.
func (h *flowHeap) top() int64 {
	if len(h.items) == 0 {
		return math.MaxInt64
	}
	return h.items[0].key
}

// push adds item id (of a flow of that rank) at time key.
func (h *flowHeap) push(id, rank int32, key int64) {
	if int(id) >= len(h.pos) {
		h.pos = append(h.pos, make([]int32, int(id)+1-len(h.pos))...)
	}
	h.items = append(h.items, flowKeyed{key, rank, id})
	h.up(len(h.items) - 1)
}

// pop takes the earliest item and returns its id.
func (h *flowHeap) pop() int32 {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.pos[h.items[0].id] = 0
		h.down(0)
	}
	return top.id
}

// fix moves item id to time key.
func (h *flowHeap) fix(id int32, key int64) {
	i := int(h.pos[id])
	h.items[i].key = key
	if !h.up(i) {
		h.down(i)
	}
}

// refix moves each item ids[i] to time keys[i]: one by one when they are
// few, else by setting them all and restoring the heap from the bottom up
// (a recompute re-times most completions at once). The items come out in
// the same order either way: (key, rank) orders them totally.
func (h *flowHeap) refix(ids []int32, keys []int64) {
	if len(ids) < len(h.items)/4 {
		for i, id := range ids {
			h.fix(id, keys[i])
		}
		return
	}
	for i, id := range ids {
		h.items[h.pos[id]].key = keys[i]
	}
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// move renames item from to: the completions' ids are slots, and a
// completion moves the last active flow into the slot it frees.
func (h *flowHeap) move(from, to int32) {
	i := h.pos[from]
	h.items[i].id = to
	h.pos[to] = i
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
		h.pos[h.items[i].id] = int32(i)
		i = p
	}
	h.items[i] = x
	h.pos[x.id] = int32(i)
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
		h.pos[h.items[i].id] = int32(i)
		i = c
	}
	h.items[i] = x
	h.pos[x.id] = int32(i)
}
