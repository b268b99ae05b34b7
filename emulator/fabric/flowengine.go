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
	lq       []linkQueue // per directed link
	ls       []linkState // per directed link
	capacity []float64   // per directed link, bits per ns
	byCount  []float64   // per directed link: capacity over its flows (offered)
	fromHost []bool      // per directed link: it leaves a host's NIC

	fin, arr flowHeap
	seeds    []int   // links whose flows changed since the last recompute
	busy     int     // links with flows
	active   []int32 // ranks of the active flows, in no order
	apos     []int32 // by rank: index in active
	round    uint32
	// The flows' state a recompute reads, in flat arrays by rank: a
	// recompute visits nearly every active flow (the component of a
	// quantum's changes is most of the fabric at load), and flows active
	// together have near ranks, so these stay in cache.
	fh   []flowHot
	hops []flowHop // every flow's path, flowHot.hop0 on
	// scratch, reused by every recompute
	compL   []int
	compF   []int32
	left    []float64
	users   []int
	feeders []int
	lh      shareQueue
}

// linkState is a directed link's share of the engine's state.
type linkState struct {
	flows []flowRef // the active flows crossing it
	rsum  float64   // bits/ns sent: the sum of its flows' rates
	off   float64   // bits/ns offered to its egress queue (queue.go)
	last  int64     // counters and queue are settled up to this time
	// rounds in which it was seeded, visited, or settled by a recompute
	seeded, visited, settled uint32
}

// flowRef is a flow (its rank) on a link, and the link's position on the
// flow's path.
type flowRef struct {
	f, hop int32
}

// flowHot is what a recompute reads and writes of a flow.
type flowHot struct {
	rate, next float64 // bits per ns, while active; next: the recomputed one
	wire       float64 // wire bytes still to send at time at
	at         int64
	hop0       int32 // its path: hops[hop0 : hop0+n]
	n          int32
	mark       uint32 // round in which the recompute visited it
	fixed      bool
	counts     bool // a link of its path changed flows: offered rates may change
}

// flowHop is a link of a flow's path.
type flowHop struct {
	li   int32
	slot int32   // the flow's index in ls[li].flows
	offc float64 // the flow's offered rate at this hop (queue.go)
}

type flowState struct {
	ID         int
	After      []int   // the flow's dependencies
	idx        int     // rank by ID: ties in time go in this order
	hop0, n    int32   // its path in FlowEngine.hops (flowHot's, until ranked)
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
	e := &FlowEngine{topo: t, cfg: cfg, portSet: newPortSet(t), lq: make([]linkQueue, n), ls: make([]linkState, n),
		capacity: make([]float64, n), byCount: make([]float64, n), fromHost: make([]bool, n), left: make([]float64, n), users: make([]int, n)}
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
	for i := range e.ls {
		e.ls[i] = linkState{flows: e.ls[i].flows[:0]}
	}
	e.seeds, e.round, e.busy, e.active = e.seeds[:0], 0, 0, e.active[:0]
	if cap(e.apos) < len(fs) {
		e.apos = make([]int32, len(fs))
	}
	e.fin.reset(fs)
	e.arr.reset(fs)
	for _, st := range fs {
		switch {
		case st.done: // no path
			e.release(st)
		case st.waiting == 0:
			e.arr.push(st.idx, st.readyAt)
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
			e.complete(e.fin.pop(), now)
		}
		for e.arr.top() <= now {
			e.admit(e.arr.pop(), now)
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
	if cap(e.hops) < 6*len(flows) { // a fat-tree's longest path
		e.hops = make([]flowHop, 0, 6*len(flows))
	}
	e.hops = e.hops[:0]
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
			st.hop0, st.n = int32(len(e.hops)), int32(len(p))
			if len(names)+len(p)+1 > cap(names) {
				names = make([]string, 0, max(4096, len(p)+1))
			}
			st.result.Path = append(names[len(names):], f.Src)
			links = links[:0]
			for _, li := range p {
				e.hops = append(e.hops, flowHop{li: int32(li)})
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
	e.fh = make([]flowHot, len(fs))
	for i, st := range fs {
		if i > 0 && fs[i-1].ID == st.ID {
			return nil, fmt.Errorf("fabric: duplicate flow id %d", st.ID)
		}
		st.idx = i
		e.fh[i] = flowHot{hop0: st.hop0, n: st.n, wire: st.wire0}
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
			e.arr.push(d.idx, d.readyAt)
		}
	}
}

// admit starts a flow at now on the capacity its path has left, until the
// next recompute shares it fairly.
func (e *FlowEngine) admit(st *flowState, now int64) {
	st.active, st.result.Start = true, now
	e.apos[st.idx] = int32(len(e.active))
	e.active = append(e.active, int32(st.idx))
	fh := &e.fh[st.idx]
	fh.at = now
	hops := e.path(fh)
	rate := math.Inf(1)
	for k := range hops {
		li := int(hops[k].li)
		e.settle(li, now)
		l := &e.ls[li]
		hops[k].slot = int32(len(l.flows))
		if len(l.flows) == 0 {
			e.busy++
		}
		l.flows = append(l.flows, flowRef{int32(st.idx), int32(k)})
		e.byCount[li] = e.capacity[li] / float64(len(l.flows))
		rate = min(rate, e.capacity[li]-l.rsum)
		e.seed(li)
	}
	if rate < 1e-9 { // rounding left on a full link
		rate = 0
	}
	fh.rate = rate
	e.offered(fh)
	for _, h := range hops {
		l := &e.ls[h.li]
		l.rsum += fh.rate
		l.off += h.offc
	}
	e.fin.push(st.idx, finishTime(now, fh.wire, fh.rate))
}

// path is a flow's hops.
func (e *FlowEngine) path(fh *flowHot) []flowHop { return e.hops[fh.hop0 : fh.hop0+fh.n] }

// complete ends a flow whose last byte left its sender at now.
func (e *FlowEngine) complete(st *flowState, now int64) {
	st.active, st.done, e.fh[st.idx].wire = false, true, 0
	st.result.End = now + st.propDelay
	i, last := e.apos[st.idx], len(e.active)-1
	e.active[i] = e.active[last]
	e.apos[e.active[i]] = i
	e.active = e.active[:last]
	fh := &e.fh[st.idx]
	for _, h := range e.path(fh) {
		li := int(h.li)
		e.settle(li, now)
		l := &e.ls[li]
		last := len(l.flows) - 1
		moved := l.flows[last]
		l.flows[h.slot] = moved
		e.hops[e.fh[moved.f].hop0+moved.hop].slot = h.slot
		l.flows = l.flows[:last]
		e.byCount[li] = e.capacity[li] / float64(last)
		if last == 0 {
			e.busy--
			l.rsum, l.off = 0, 0 // no rounding left behind
		} else {
			l.rsum -= fh.rate
			l.off -= h.offc
		}
		e.seed(li)
	}
	e.release(st)
}

func (e *FlowEngine) seed(li int) {
	if l := &e.ls[li]; l.seeded != e.round+1 {
		l.seeded = e.round + 1
		e.seeds = append(e.seeds, li)
	}
}

// offered sets the rate st would offer at each hop if that hop were no
// constraint: its fair share by count on the links before it (queue.go);
// it says whether any changed.
func (e *FlowEngine) offered(fh *flowHot) bool {
	u, changed := math.Inf(1), false
	hops := e.path(fh)
	for k := range hops {
		h := &hops[k]
		if k > 0 && h.offc != u {
			h.offc, changed = u, true
		}
		u = math.Min(u, e.byCount[h.li])
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
