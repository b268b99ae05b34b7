package flb

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// pairState is a source ToR's view of its paths to one destination ToR:
// their queueing delays as fed back, when each was last stamped, and the
// isolation paths with the congested flows pinned to them.
type pairState struct {
	q, updated []int64 // ns; updated -1: never
	stamped    []int64 // ns: the path's last stamped departure; -1: never
	minBase    int64   // ns: the least base one-way delay fed back; -1: none
	iso        uint64  // isolation paths (bit = path ID; paths beyond 63 are never isolated)
	congested  []int32 // flows in the isolation table
}

func newPair(n int) *pairState {
	t := &pairState{q: make([]int64, n), updated: make([]int64, n), stamped: make([]int64, n)}
	t.reset()
	return t
}

func (t *pairState) reset() {
	clear(t.q)
	for i := range t.updated {
		t.updated[i], t.stamped[i] = -1, -1
	}
	t.minBase, t.iso, t.congested = -1, 0, t.congested[:0]
}

// due is whether a packet leaving on path id now is to be stamped: one
// per path every rtts base RTTs (the base RTT twice the least base
// one-way delay fed back; every packet until one is).
func (t *pairState) due(id int32, now int64, rtts float64) bool {
	if id < 0 || int(id) >= len(t.stamped) {
		return false
	}
	if t.stamped[id] >= 0 && t.minBase >= 0 && float64(now-t.stamped[id]) < rtts*2*float64(t.minBase) {
		return false
	}
	t.stamped[id] = now
	return true
}

// learn records what the destination ToR fed back about path id.
func (t *pairState) learn(id, q int32, base, now int64) {
	if id < 0 || int(id) >= len(t.q) {
		return
	}
	t.q[id], t.updated[id] = int64(q), now
	if t.minBase < 0 || base < t.minBase {
		t.minBase = base
	}
}

// delay is path id's queueing delay at now: 0 if never fed back or not
// refreshed for longer than age.
func (t *pairState) delay(id int, now, age int64) int64 {
	if t.updated[id] < 0 || now-t.updated[id] > age {
		return 0
	}
	return t.q[id]
}

func (t *pairState) isolated(id int32) bool { return id < 64 && t.iso&(1<<id) != 0 }

// pair is the source ToR's state toward dst (nil: no path).
func (m *Module) pair(sw lb.Switch, st *swState, dst int) *pairState {
	if t := st.toward[dst]; t != nil {
		return t
	}
	n := sw.Paths(sw.ID(), dst)
	if n == 0 {
		return nil
	}
	st.toward[dst] = newPair(n)
	return st.toward[dst]
}

// recvState is a destination ToR's view of the paths from one source ToR:
// per path the base (least) one-way delay and the latest queueing delay,
// to feed back round robin, changed ones first (as CONGA's From-Leaf
// table).
type recvState struct {
	base, q, updated []int64 // ns; base -1: no sample yet
	changed          []bool
	next             int
}

func (r *recvState) reset() {
	for i := range r.base {
		r.base[i], r.q[i], r.updated[i], r.changed[i] = -1, 0, -1, false
	}
	r.next = 0
}

func (m *Module) recv(sw lb.Switch, st *swState, src int) *recvState {
	if r := st.from[src]; r != nil {
		return r
	}
	n := sw.Paths(src, sw.ID())
	r := &recvState{base: make([]int64, n), q: make([]int64, n), updated: make([]int64, n), changed: make([]bool, n)}
	r.reset()
	st.from[src] = r
	return r
}

// sample takes a one-way delay of owd ns on path id at now.
func (r *recvState) sample(id int32, owd, now int64) {
	if id < 0 || int(id) >= len(r.base) {
		return
	}
	if r.base[id] < 0 || owd < r.base[id] {
		r.base[id] = owd
	}
	q := owd - r.base[id]
	if r.updated[id] < 0 || q != r.q[id] {
		r.changed[id] = true
	}
	r.q[id], r.updated[id] = q, now
}

// feedback is the next (path, queueing delay, base) to piggyback: a
// changed one, else a fresh one in turn; ok false when none is fresh.
func (r *recvState) feedback(now, age int64) (id, q int32, base int64, ok bool) {
	n := len(r.base)
	for pass := 0; pass < 2; pass++ {
		for k := 0; k < n; k++ {
			i := (r.next + k) % n
			if r.updated[i] < 0 || now-r.updated[i] > age || pass == 0 && !r.changed[i] {
				continue
			}
			r.changed[i], r.next = false, (i+1)%n
			return int32(i), int32(min(r.q[i], math.MaxInt32)), r.base[i], true
		}
	}
	return 0, 0, 0, false
}
