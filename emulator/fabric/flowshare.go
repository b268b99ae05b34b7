package fabric

import (
	"math"
	"math/bits"
	"slices"
)

// recompute sets max-min fair rates by progressive filling over the flows
// that share a link, transitively, with a link seeded since the last
// recompute: the connected component of the change. Other flows keep their
// rates, which a max-min recomputation over everything would leave as they
// are too.
//
// The walk also sets up the fill (below): each link's capacity and flows
// left to fix, the shared links in its queue, and each flow's bound.
func (e *FlowEngine) recompute(now int64) {
	e.round++
	r := e.round
	links, flows := e.compL[:0], e.compF[:0]
	lh := &e.lh
	lh.reset(e)
	visit := func(li int) {
		l := &e.links[li]
		l.visited = r
		links = append(links, li)
		l.left, l.users = e.capacity[li], l.n
		if l.n > 1 {
			lh.push(l.share(), li)
		}
	}
	take := func(fi int32) {
		f := &e.act[fi]
		f.mark, f.fixed, f.counts = r, false, false
		// A shared link of capacity at most the bound fixes the flow no
		// later than the bound would: its share never exceeds it.
		bound, shared := math.Inf(1), math.Inf(1)
		for _, h := range e.path(fi) {
			l2 := &e.links[h.li]
			f.counts = f.counts || l2.isSeeded(r)
			if l2.n == 1 {
				bound = min(bound, e.capacity[h.li])
			} else {
				shared = min(shared, e.capacity[h.li])
			}
			if !l2.isVisited(r) {
				visit(int(h.li))
			}
		}
		if bound < shared {
			lh.push(bound, -1-len(flows))
		}
		flows = append(flows, fi)
	}
	if 4*len(e.seeds) >= e.busy {
		// So many links changed that their component is all but certainly
		// every active flow: take them in a row instead of walking links
		// to find them (the other components come out as they were).
		for fi := range e.act {
			take(int32(fi))
		}
	} else {
		for _, li := range e.seeds {
			visit(li)
		}
		for i := 0; i < len(links); i++ {
			l := &e.links[links[i]]
			for k := int32(0); k < l.n; k++ {
				if f := e.ref(l, k).f; e.act[f].mark != r {
					take(f)
				}
			}
		}
	}
	e.seeds = e.seeds[:0]
	e.compL, e.compF = links, flows
	lh.flows = flows
	e.fill(flows)
	e.apply(now, links, flows)
}

// fill is progressive filling: the link with the smallest fair share fixes
// the rate of its unfixed flows at that share, which leaves the others'
// shares no smaller. A queue (shareQueue) finds that link; its keys are
// lower bounds (a share only grows as flows are fixed), so a link whose
// share grew since it was pushed goes back in with its share when it comes
// up. A link with one flow enters the queue as that flow's bound (its
// capacity; the lowest of them if the flow has several), and only when no
// shared link of the flow is narrower, so the queue holds little more than
// the shared links.
func (e *FlowEngine) fill(flows []int32) {
	lh := &e.lh
	for {
		s, li, ok := lh.pop()
		if !ok {
			break
		}
		if li < 0 { // a flow's bound
			if fi := flows[-1-li]; !e.act[fi].fixed {
				e.fix(fi, s)
			}
			continue
		}
		l := &e.links[li]
		if l.users == 0 {
			continue
		}
		if cur := l.share(); cur > s {
			lh.push(cur, li)
			continue
		} else {
			s = cur
		}
		for k := int32(0); k < l.n; k++ {
			if f := e.ref(l, k).f; !e.act[f].fixed {
				e.fix(f, s)
			}
		}
	}
}

// fix sets the rate of the flow in slot fi at s and takes it from the
// links it crosses.
func (e *FlowEngine) fix(fi int32, s float64) {
	f := &e.act[fi]
	f.fixed, f.next = true, s
	for _, h := range e.path(fi) {
		l := &e.links[h.li]
		l.left -= s
		l.users--
	}
}

// apply gives the component's flows their new rates (and offered rates,
// queue.go), settling each link whose sums change first and summing them
// afresh (no rounding carried over).
func (e *FlowEngine) apply(now int64, links []int, flows []int32) {
	r := e.round
	for _, fi := range flows {
		f := &e.act[fi]
		// A rate recomputed to within rounding of the old one is kept:
		// changing it would settle its links and re-time its completion
		// for nothing. Offered rates follow counts of seeded links.
		rate := math.Abs(f.next-f.rate) > 1e-9*f.next
		if !(f.counts && e.offered(fi)) && !rate {
			continue
		}
		for _, h := range e.path(fi) {
			e.links[h.li].visited = r | linkSettled // every link of the component was visited
		}
		if rate {
			f.wire -= f.rate * float64(now-f.at) / 8
			f.at, f.rate = now, f.next
			e.refixIDs = append(e.refixIDs, fi)
			e.refixKeys = append(e.refixKeys, finishTime(now, f.wire, f.rate))
		}
	}
	e.fin.refix(e.refixIDs, e.refixKeys)
	e.refixIDs, e.refixKeys = e.refixIDs[:0], e.refixKeys[:0]
	for _, li := range links {
		l := &e.links[li]
		if l.visited != r|linkSettled {
			continue
		}
		e.settle(li, now) // at the sums of the old rates
		l.rsum, l.off = 0, 0
		for k := int32(0); k < l.n; k++ {
			ref := e.ref(l, k)
			l.rsum += e.act[ref.f].rate
			l.off += e.hop(ref.f, ref.hop).offc
		}
	}
}

// share is a link's fair share of what its fixed flows left.
func (l *flowLink) share() float64 { return max(l.left, 0) / float64(l.users) }

// shareQueue gives the fill its links (and flows' bounds) by fair share,
// ties by index. It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan):
// the fill takes shares in ascending order and puts a link back only with
// a larger share than the one it took, so an item sits in the bucket of
// the highest bit in which its share's bits (ordered as the shares, none
// being negative) differ from the last taken; taking from an empty bucket
// 0 spreads the lowest non-empty bucket out by its least share, and bucket
// 0's links are sorted by index (ties go in index order). Most items
// come up only to be passed over (their flows fixed by narrower links), so
// a heap's sifts were most of the fill's cost.
type shareQueue struct {
	b    [65][]linkShare // b[0] unused: at is bucket 0
	at   []int           // the links (or bounds) with the last share, from at[next] on, in order
	occ  uint64          // bit k-1: b[k] holds items
	bits []uint64        // sortAt's scratch, all zero between calls
	next int
	last uint64
	n    int
	// what tells a link or bound the fill would pass over (its flows all
	// fixed): such an item is dropped whenever the queue moves it
	e     *FlowEngine
	flows []int32
}

type linkShare struct {
	share float64
	li    int
}

// reset empties the queue for a fill of e; the fill sets flows, its flows
// by bound index, before taking from it.
func (q *shareQueue) reset(e *FlowEngine) {
	for i := range q.b {
		q.b[i] = q.b[i][:0]
	}
	q.at, q.next, q.last, q.n, q.occ = q.at[:0], 0, 0, 0, 0
	q.e, q.flows = e, nil
}

// spent says whether the fill would pass over the link (or bound) li.
func (q *shareQueue) spent(li int) bool {
	if li < 0 {
		return q.e.act[q.flows[-1-li]].fixed
	}
	return q.e.links[li].users == 0
}

func (q *shareQueue) push(share float64, li int) {
	q.n++
	k := bits.Len64(math.Float64bits(share) ^ q.last)
	if k > 0 {
		q.b[k] = append(q.b[k], linkShare{share, li})
		q.occ |= 1 << (k - 1)
		return
	}
	// The last share again: only before the first take (the fill puts
	// back a link only with a larger share than it took).
	i, _ := slices.BinarySearch(q.at[q.next:], li)
	q.at = slices.Insert(q.at, q.next+i, li)
}

// sortAt sorts the items of a level of equal shares by index: by
// insertion when there are few (four on average at 1,024 hosts), else by
// a bit per index in the level's range (up to some 500 at once: a sort
// of each was a quarter of the fill). Items are distinct: a link or bound
// is in the queue once at most.
func (q *shareQueue) sortAt() {
	s := q.at
	if len(s) <= 12 {
		for i := 1; i < len(s); i++ {
			for j := i; j > 0 && s[j] < s[j-1]; j-- {
				s[j], s[j-1] = s[j-1], s[j]
			}
		}
		return
	}
	lo, hi := slices.Min(s), slices.Max(s)
	words := (hi-lo)/64 + 1
	if words > 8*len(s) { // sparse: a sort is cheaper than the scan
		slices.Sort(s)
		return
	}
	if cap(q.bits) < words {
		q.bits = make([]uint64, words)
	}
	set := q.bits[:words]
	for _, v := range s {
		set[(v-lo)>>6] |= 1 << ((v - lo) & 63)
	}
	i := 0
	for w, m := range set {
		for ; m != 0; m &= m - 1 {
			s[i] = lo + w<<6 + bits.TrailingZeros64(m)
			i++
		}
		set[w] = 0
	}
	if i != len(s) {
		panic("fabric: an item twice in the fill's queue")
	}
}

// pop takes the item of least share, ties by index; false when none is
// left.
func (q *shareQueue) pop() (float64, int, bool) {
	for q.next == len(q.at) {
		if q.n == 0 {
			return 0, 0, false
		}
		k := bits.TrailingZeros64(q.occ) + 1
		m := math.Float64bits(q.b[k][0].share)
		for _, x := range q.b[k][1:] {
			m = min(m, math.Float64bits(x.share))
		}
		q.last, q.at, q.next = m, q.at[:0], 0
		for _, x := range q.b[k] {
			if q.spent(x.li) {
				q.n--
				continue
			}
			if j := bits.Len64(math.Float64bits(x.share) ^ m); j > 0 {
				q.b[j] = append(q.b[j], x)
				q.occ |= 1 << (j - 1)
			} else {
				q.at = append(q.at, x.li)
			}
		}
		q.b[k] = q.b[k][:0]
		q.occ &^= 1 << (k - 1)
		q.sortAt()
	}
	li := q.at[q.next]
	q.next++
	q.n--
	return math.Float64frombits(q.last), li, true
}
