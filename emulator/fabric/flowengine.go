package fabric

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/labctl/labctl/inventory"
)

// defaultFlowQuantumNs is the flow engine's default recompute quantum (see
// Config.FlowQuantumNs; the sweep behind it is in docs/fabric-twin.md).
const defaultFlowQuantumNs = 1000

// FlowEngine is the flow-level engine: max-min fair sharing (progressive
// filling) over ECMP-hashed paths. It models queues, PFC and ECN as fluids
// (see queue.go); it does not model packets, congestion control or
// retransmission.
//
// Its cost follows what changes, not what exists: flows wait in a heap of
// arrivals and a heap of completions; max-min is recomputed only over the
// flows that share a link, transitively, with the flows that arrived or
// finished (a connected component: the others' rates cannot change); and a
// link's counters and fluid queue are brought up to date only when the
// rates crossing it change (they are linear in between). With a quantum
// (Config.FlowQuantumNs) the arrivals and completions within it share one
// recomputation.
type FlowEngine struct {
	topo *Topology
	cfg  Config
	portSet
	links    []flowLink  // per directed link
	spill    [][]flowRef // links' flows beyond their inline ones (flowLink.more)
	lq       []linkQueue // per directed link
	capacity []float64   // per directed link, bits per ns
	byCount  []float64   // per directed link: capacity over its flows (offered)
	fromHost []bool      // per directed link: it leaves a host's NIC

	fin, arr flowHeap // completions by active slot, arrivals by rank
	seeds    []int    // links whose flows changed since the last recompute
	busy     int      // links with flows
	round    uint32
	// The active flows' state a recompute reads, dense by active slot: a
	// recompute visits nearly every active flow (the component of a
	// quantum's changes is most of the fabric at load), and long flows
	// keep old ranks, so state by rank was spread over the run's flows.
	// A completion moves the last slot's flow into the slot it frees.
	act    []actFlow
	ahops  []flowHop // active flows' paths: slot s's at s*stride
	stride int       // the longest path of the run
	paths  []int32   // every flow's path, by flowState.hop0
	// scratch, reused by every recompute
	compL     []int
	compF     []int32
	feeders   []int
	refixIDs  []int32 // completions a recompute re-times, and their times
	refixKeys []int64
	lh        shareQueue
}

// flowRef is a flow (its active slot) on a link, and the link's position
// on the flow's path.
type flowRef struct {
	f, hop int32
}

// actFlow is what a recompute reads and writes of an active flow.
type actFlow struct {
	rate, next float64 // bits per ns; next: the recomputed one
	wire       float64 // wire bytes still to send at time at
	at         int64
	rank       int32
	n          int32  // hops
	mark       uint32 // round in which the recompute visited it
	fixed      bool
	counts     bool // a link of its path changed flows: offered rates may change
}

// flowHop is a link of an active flow's path.
type flowHop struct {
	li   int32
	slot int32   // the flow's index among its link's flows (FlowEngine.ref)
	offc float64 // the flow's offered rate at this hop (queue.go)
}

type flowState struct {
	ID         int
	After      []int   // the flow's dependencies
	idx        int     // rank by ID: ties in time go in this order
	hop0, n    int32   // its path in FlowEngine.paths
	wire0      float64 // wire bytes to send
	readyAt    int64
	waiting    int // dependencies not finished yet
	dependents []*flowState
	active     bool
	done       bool
	result     Result
	propDelay  int64
}

// NewFlowEngine makes a flow-level engine over t.
func NewFlowEngine(t *Topology, cfg Config) *FlowEngine {
	def := DefaultConfig()
	if cfg.MTU <= 0 {
		cfg.MTU = def.MTU
	}
	n := len(t.links)
	e := &FlowEngine{topo: t, cfg: cfg, portSet: newPortSet(t), lq: make([]linkQueue, n), links: make([]flowLink, n),
		capacity: make([]float64, n), byCount: make([]float64, n), fromHost: make([]bool, n)}
	for li, l := range t.links {
		e.capacity[li], e.fromHost[li] = l.rate, t.isHost[l.from]
	}
	return e
}

// Run implements Engine.
func (e *FlowEngine) Run(ctx context.Context, flows []Flow, opt RunOptions) ([]Result, error) {
	fs, err := e.prepare(flows)
	if err != nil {
		return nil, err
	}
	quantum := e.cfg.FlowQuantumNs
	if quantum == 0 {
		quantum = defaultFlowQuantumNs
	}
	for i := range e.links {
		l := &e.links[i]
		// what a run left in the queue and counts stays (a run cut short)
		*l = flowLink{txB: l.txB, txP: l.txP, seeded: l.seeded & linkQueued}
	}
	e.spill = e.spill[:0]
	e.seeds, e.round, e.busy, e.act, e.ahops = e.seeds[:0], 0, 0, e.act[:0], e.ahops[:0]
	e.fin.reset(0)
	e.arr.reset(len(fs))
	for _, st := range fs {
		switch {
		case st.done: // no path
			e.release(st)
		case st.waiting == 0:
			e.arr.push(int32(st.idx), int32(st.idx), st.readyAt)
		}
	}
	var now int64
	nextSample, recomputeAt := int64(math.MaxInt64), int64(math.MaxInt64)
	if opt.SampleEvery > 0 {
		nextSample = opt.SampleEvery
	}
	sample := func(t int64) {
		if opt.OnSample != nil {
			e.settleAll(t)
			opt.OnSample(t, e.Counters())
		}
	}
	for iter := 0; ; iter++ {
		if iter%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		next := min(e.arr.top(), e.fin.top(), recomputeAt)
		if next == math.MaxInt64 {
			break
		}
		for ; nextSample < next; nextSample += opt.SampleEvery {
			sample(nextSample)
		}
		now = next
		for e.fin.top() <= now {
			s := e.fin.pop()
			e.complete(fs[e.act[s].rank], s, now)
		}
		for e.arr.top() <= now {
			e.admit(fs[e.arr.pop()], now)
		}
		if len(e.seeds) == 0 {
			continue
		}
		// The quantum's grid: changes wait for its next point (a change on
		// it is shared at once).
		if quantum > 0 && recomputeAt > now {
			if at := (now + quantum - 1) / quantum * quantum; at > now {
				recomputeAt = min(recomputeAt, at)
				continue
			}
		}
		e.recompute(now)
		recomputeAt = math.MaxInt64
	}
	pending := 0
	for _, st := range fs {
		if !st.done {
			pending++
		}
	}
	if pending > 0 {
		return nil, fmt.Errorf("fabric: %d flows wait on dependencies that never finish", pending)
	}
	e.settleAll(now)
	e.drainQueues()
	sample(now)
	out := make([]Result, len(fs))
	for i, st := range fs {
		out[i] = st.result
	}
	return out, nil
}

// prepare makes the flows' states in ID order, with their paths and
// dependencies. States, paths and results' device lists are carved from a
// few large arrays (a run at 1,024 hosts has 150,000 flows).
func (e *FlowEngine) prepare(flows []Flow) ([]*flowState, error) {
	states := make([]flowState, len(flows))
	fs := make([]*flowState, len(flows))
	r := newRouter(e.topo, e.cfg.Seed)
	if cap(e.paths) < 6*len(flows) { // a fat-tree's longest path
		e.paths = make([]int32, 0, 6*len(flows))
	}
	e.paths, e.stride = e.paths[:0], 1
	var names []string
	var links []inventory.PathLink
	for i, f := range flows {
		st := &states[i]
		*st = flowState{ID: f.ID, After: f.After, result: Result{ID: f.ID, Bytes: f.Bytes}, readyAt: f.Start, waiting: len(f.After)}
		pkts := math.Ceil(float64(f.Bytes) / float64(e.cfg.MTU))
		st.wire0 = float64(f.Bytes) + pkts*float64(e.cfg.HeaderBytes)
		p, err := r.path(f)
		if err != nil {
			st.done, st.result.Err = true, err.Error()
		} else {
			st.hop0, st.n = int32(len(e.paths)), int32(len(p))
			e.stride = max(e.stride, len(p))
			if len(names)+len(p)+1 > cap(names) {
				names = make([]string, 0, max(4096, len(p)+1))
			}
			st.result.Path = append(names[len(names):], f.Src)
			links = links[:0]
			for _, li := range p {
				e.paths = append(e.paths, int32(li))
				st.result.Path = append(st.result.Path, e.topo.links[li].to)
				links = append(links, inventory.PathLink{Gbps: e.topo.links[li].rate, DelayNs: e.topo.links[li].delay})
			}
			names = names[:len(names)+len(st.result.Path)]
			st.result.Path = st.result.Path[:len(st.result.Path):len(st.result.Path)] // appending copies
			// The first packet's store and forward, the way there and the
			// last ACK's way back (a flow completes at its sender).
			first := min(f.Bytes, int64(e.cfg.MTU)) + int64(e.cfg.HeaderBytes)
			st.propDelay = int64(math.Ceil(inventory.RoundTrip(first, links)))
		}
		fs[i] = st
	}
	byID := func(a, b *flowState) int { return cmp.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(fs, byID) { // workloads come in ID order
		slices.SortStableFunc(fs, byID)
	}
	for i, st := range fs {
		if i > 0 && fs[i-1].ID == st.ID {
			return nil, fmt.Errorf("fabric: duplicate flow id %d", st.ID)
		}
		st.idx = i
	}
	for _, st := range fs {
		for _, a := range st.After {
			j := sort.Search(len(fs), func(j int) bool { return fs[j].ID >= a })
			if j == len(fs) || fs[j].ID != a {
				return nil, fmt.Errorf("fabric: flow %d depends on unknown flow %d", st.ID, a)
			}
			fs[j].dependents = append(fs[j].dependents, st)
		}
	}
	return fs, nil
}

// release tells a finished (or failed) flow's dependents: they start when
// the last of their dependencies has ended, or fail with it.
func (e *FlowEngine) release(st *flowState) {
	for _, d := range st.dependents {
		if d.done {
			continue
		}
		if st.result.Err != "" {
			d.done, d.result.Err = true, fmt.Sprintf("dependency flow %d failed", st.ID)
			e.release(d)
			continue
		}
		d.readyAt = max(d.readyAt, st.result.End)
		if d.waiting--; d.waiting == 0 {
			e.arr.push(int32(d.idx), int32(d.idx), d.readyAt)
		}
	}
}

// admit starts a flow at now on the capacity its path has left, until the
// next recompute shares it fairly.
func (e *FlowEngine) admit(st *flowState, now int64) {
	st.active, st.result.Start = true, now
	slot := int32(len(e.act))
	e.act = append(e.act, actFlow{wire: st.wire0, at: now, rank: int32(st.idx), n: st.n})
	n := len(e.ahops) + e.stride
	e.ahops = slices.Grow(e.ahops, e.stride)[:n]
	clear(e.ahops[n-e.stride:])
	f := &e.act[slot]
	hops := e.path(slot)
	for k, li := range e.paths[st.hop0 : st.hop0+st.n] {
		hops[k].li = li
	}
	rate := math.Inf(1)
	for k := range hops {
		li := int(hops[k].li)
		e.settle(li, now)
		l := &e.links[li]
		hops[k].slot = l.n
		if l.n == 0 {
			e.busy++
		}
		e.addRef(l, flowRef{slot, int32(k)})
		e.byCount[li] = e.capacity[li] / float64(l.n)
		rate = min(rate, e.capacity[li]-l.rsum)
		e.seed(li)
	}
	if rate < 1e-9 { // rounding left on a full link
		rate = 0
	}
	f.rate = rate
	e.offered(slot)
	for _, h := range hops {
		l := &e.links[h.li]
		l.rsum += f.rate
		l.off += h.offc
	}
	e.fin.push(slot, f.rank, finishTime(now, f.wire, f.rate))
}

// hop is hop k of the flow in active slot s.
func (e *FlowEngine) hop(s, k int32) *flowHop { return &e.ahops[int(s)*e.stride+int(k)] }

// path is the hops of the flow in active slot s.
func (e *FlowEngine) path(s int32) []flowHop {
	i := int(s) * e.stride
	return e.ahops[i : i+int(e.act[s].n)]
}

// complete ends the flow st, in active slot s, whose last byte left its
// sender at now.
func (e *FlowEngine) complete(st *flowState, s int32, now int64) {
	st.active, st.done = false, true
	st.result.End = now + st.propDelay
	f := &e.act[s]
	for _, h := range e.path(s) {
		li := int(h.li)
		e.settle(li, now)
		l := &e.links[li]
		last := l.n - 1
		moved := *e.ref(l, last)
		*e.ref(l, h.slot) = moved
		e.hop(moved.f, moved.hop).slot = h.slot
		l.n = last
		e.byCount[li] = e.capacity[li] / float64(last)
		if last == 0 {
			e.busy--
			l.rsum, l.off = 0, 0 // no rounding left behind
		} else {
			l.rsum -= f.rate
			l.off -= h.offc
		}
		e.seed(li)
	}
	e.vacate(s)
	e.release(st)
}

// vacate frees active slot s: the last active flow moves into it, and
// its links' entries and its completion follow.
func (e *FlowEngine) vacate(s int32) {
	last := int32(len(e.act) - 1)
	if s != last {
		e.act[s] = e.act[last]
		copy(e.ahops[int(s)*e.stride:int(s+1)*e.stride], e.ahops[int(last)*e.stride:int(last+1)*e.stride])
		for _, h := range e.path(s) {
			e.ref(&e.links[h.li], h.slot).f = s
		}
		e.fin.move(last, s)
	}
	e.act = e.act[:last]
	e.ahops = e.ahops[:int(last)*e.stride]
}

func (e *FlowEngine) seed(li int) {
	if l := &e.links[li]; !l.isSeeded(e.round + 1) {
		l.seeded = (e.round + 1) | l.seeded&linkQueued
		e.seeds = append(e.seeds, li)
	}
}

// offered sets the rate the flow in slot s would offer at each hop if
// that hop were no constraint: its fair share by count on the links
// before it (queue.go); it says whether any changed.
func (e *FlowEngine) offered(s int32) bool {
	u, changed := math.Inf(1), false
	hops := e.path(s)
	for k := range hops {
		h := &hops[k]
		if k > 0 && h.offc != u {
			h.offc, changed = u, true
		}
		u = min(u, e.byCount[h.li])
	}
	return changed
}

func finishTime(now int64, wire, rate float64) int64 {
	if rate <= 0 {
		return math.MaxInt64
	}
	dt := math.Ceil(max(wire, 0) * 8 / rate)
	if dt >= math.MaxInt64/2 {
		return math.MaxInt64
	}
	return now + int64(dt)
}

// Configure changes the engine's configuration between runs (provisioned
// switch settings reach the twin this way).
func (e *FlowEngine) Configure(fn func(*Config)) { fn(&e.cfg) }

// Config is the engine's current configuration.
func (e *FlowEngine) Config() Config { return e.cfg }
