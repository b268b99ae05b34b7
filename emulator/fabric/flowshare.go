package fabric

import "math"

// recompute sets max-min fair rates by progressive filling over the flows
// that share a link, transitively, with a link seeded since the last
// recompute: the connected component of the change. Other flows keep their
// rates, which a max-min recomputation over everything would leave as they
// are too.
func (e *FlowEngine) recompute(now int64) {
	e.round++
	r := e.round
	links, flows := e.compL[:0], e.compF[:0]
	for _, li := range e.seeds {
		e.ls[li].visited = r
		links = append(links, li)
	}
	e.seeds = e.seeds[:0]
	for i := 0; i < len(links); i++ {
		for _, ref := range e.ls[links[i]].flows {
			f := &e.fh[ref.f]
			if f.mark == r {
				continue
			}
			f.mark, f.fixed, f.counts = r, false, false
			flows = append(flows, ref.f)
			for _, h := range e.path(f) {
				l2 := &e.ls[h.li]
				f.counts = f.counts || l2.seeded == r
				if l2.visited != r {
					l2.visited = r
					links = append(links, int(h.li))
				}
			}
		}
	}
	e.compL, e.compF = links, flows
	e.fill(links, flows)
	e.apply(now, links, flows)
}

// fill is progressive filling: the link with the smallest fair share fixes
// the rate of its unfixed flows at that share, which leaves the others'
// shares no smaller. A heap finds that link; its keys are lower bounds (a
// share only grows as flows are fixed), so a link whose share grew since
// it was pushed goes back in with its share when it comes up. A link with
// one flow enters the heap as that flow's bound (its capacity; the lowest
// of them if the flow has several), and only when no shared link of the
// flow is narrower, so the heap holds little more than the shared links.
func (e *FlowEngine) fill(links []int, flows []int32) {
	left, users, lh := e.left, e.users, &e.lh
	lh.items = lh.items[:0]
	for _, li := range links {
		n := len(e.ls[li].flows)
		left[li], users[li] = e.capacity[li], n
		if n > 1 {
			lh.items = append(lh.items, linkShare{e.share(li), li})
		}
	}
	for i, fi := range flows {
		// A shared link of capacity at most the bound fixes the flow no
		// later than the bound would: its share never exceeds it.
		bound, shared := math.Inf(1), math.Inf(1)
		for _, h := range e.path(&e.fh[fi]) {
			if users[h.li] == 1 {
				bound = min(bound, left[h.li])
			} else {
				shared = min(shared, left[h.li])
			}
		}
		if bound < shared {
			lh.items = append(lh.items, linkShare{bound, -1 - i})
		}
	}
	lh.heapify()
	for len(lh.items) > 0 {
		s, li := lh.pop()
		if li < 0 { // a flow's bound
			if f := &e.fh[flows[-1-li]]; !f.fixed {
				e.fix(f, s)
			}
			continue
		}
		if users[li] == 0 {
			continue
		}
		if cur := e.share(li); cur > s {
			lh.push(cur, li)
			continue
		} else {
			s = cur
		}
		for _, ref := range e.ls[li].flows {
			if f := &e.fh[ref.f]; !f.fixed {
				e.fix(f, s)
			}
		}
	}
}

// fix sets f's rate at s and takes it from the links f crosses.
func (e *FlowEngine) fix(f *flowHot, s float64) {
	f.fixed, f.next = true, s
	for _, h := range e.path(f) {
		e.left[h.li] -= s
		e.users[h.li]--
	}
}

// apply gives the component's flows their new rates (and offered rates,
// queue.go), settling each link whose sums change first and summing them
// afresh (no rounding carried over).
func (e *FlowEngine) apply(now int64, links []int, flows []int32) {
	r := e.round
	for _, fi := range flows {
		f := &e.fh[fi]
		// A rate recomputed to within rounding of the old one is kept:
		// changing it would settle its links and re-time its completion
		// for nothing. Offered rates follow counts of seeded links.
		rate := math.Abs(f.next-f.rate) > 1e-9*f.next
		if !(f.counts && e.offered(f)) && !rate {
			continue
		}
		for _, h := range e.path(f) {
			if l := &e.ls[h.li]; l.settled != r {
				l.settled = r
				e.settle(int(h.li), now)
			}
		}
		if rate {
			st := e.fs[fi]
			st.wire -= f.rate * float64(now-st.at) / 8
			st.at, f.rate = now, f.next
			st.finishAt = finishTime(now, st.wire, f.rate)
			e.fin.fix(st)
		}
	}
	for _, li := range links {
		l := &e.ls[li]
		if l.settled != r {
			continue
		}
		l.rsum, l.off = 0, 0
		for _, ref := range l.flows {
			f := &e.fh[ref.f]
			l.rsum += f.rate
			l.off += e.hops[f.hop0+ref.hop].offc
		}
	}
}

// share is a link's fair share of what its fixed flows left.
func (e *FlowEngine) share(li int) float64 { return max(e.left[li], 0) / float64(e.users[li]) }

// linkHeap orders links by fair share, ties by index.
type linkHeap struct{ items []linkShare }

type linkShare struct {
	share float64
	li    int
}

func (a linkShare) before(b linkShare) bool {
	return a.share < b.share || a.share == b.share && a.li < b.li
}

// The heap is 4-ary: half the depth of a binary one, and a node's children
// share a cache line or two.
func (h *linkHeap) push(share float64, li int) {
	x := linkShare{share, li}
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(h.items[p]) {
			break
		}
		h.items[i] = h.items[p]
		i = p
	}
	h.items[i] = x
}

func (h *linkHeap) pop() (float64, int) {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top.share, top.li
}

func (h *linkHeap) heapify() {
	for i := (len(h.items) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
}

func (h *linkHeap) down(i int) {
	items := h.items
	n := len(items)
	if i >= n {
		return
	}
	x := items[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if items[j].before(items[best]) {
				best = j
			}
		}
		if !items[best].before(x) {
			break
		}
		items[i] = items[best]
		i = best
	}
	items[i] = x
}
