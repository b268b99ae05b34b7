package fabric

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/labctl/labctl/inventory"
)

// FlowEngine is the flow-level engine: max-min fair sharing (progressive
// filling) over ECMP-hashed paths, recomputed at every flow arrival and
// completion. It is exact for bandwidth sharing at that granularity and
// models queues, PFC and ECN as fluids (see queue.go); it does not model
// packets, congestion control or retransmission.
type FlowEngine struct {
	topo *Topology
	cfg  Config
	portSet
	lq    []linkQueue // per directed link
	clock int64       // sim time within the current Run

	// per directed link: the active flows crossing it (rebuilt whenever
	// rates change)
	lflows [][]*flowState
	// scratch, reused by every advance
	tx, offered, left []float64
	users             []int
}

// NewFlowEngine makes a flow-level engine over t.
func NewFlowEngine(t *Topology, cfg Config) *FlowEngine {
	def := DefaultConfig()
	if cfg.MTU <= 0 {
		cfg.MTU = def.MTU
	}
	n := len(t.links)
	e := &FlowEngine{topo: t, cfg: cfg, portSet: newPortSet(t), lq: make([]linkQueue, n), lflows: make([][]*flowState, n),
		tx: make([]float64, n), offered: make([]float64, n), left: make([]float64, n), users: make([]int, n)}
	return e
}

type flowState struct {
	Flow
	path      []int
	wire      float64 // wire bytes still to send
	rate      float64 // bits per ns, while active
	start     int64
	finishAt  int64
	active    bool
	done      bool
	result    Result
	propDelay int64
}

// Run implements Engine.
func (e *FlowEngine) Run(ctx context.Context, flows []Flow, opt RunOptions) ([]Result, error) {
	fs := make([]*flowState, len(flows))
	byID := map[int]*flowState{}
	for i, f := range flows {
		if _, dup := byID[f.ID]; dup {
			return nil, fmt.Errorf("fabric: duplicate flow id %d", f.ID)
		}
		st := &flowState{Flow: f, result: Result{ID: f.ID, Bytes: f.Bytes}}
		pkts := math.Ceil(float64(f.Bytes) / float64(e.cfg.MTU))
		st.wire = float64(f.Bytes) + pkts*float64(e.cfg.HeaderBytes)
		p, err := e.topo.path(f, e.cfg.Seed)
		if err != nil {
			st.done, st.result.Err = true, err.Error()
		} else {
			st.path = p
			st.result.Path = []string{f.Src}
			for _, li := range p {
				st.result.Path = append(st.result.Path, e.topo.links[li].to)
			}
			// The first packet's store and forward, the way there and the
			// last ACK's way back (a flow completes at its sender).
			first := min(f.Bytes, int64(e.cfg.MTU)) + int64(e.cfg.HeaderBytes)
			st.propDelay = int64(math.Ceil(inventory.RoundTrip(first, e.topo.pathLinks(p))))
		}
		fs[i], byID[f.ID] = st, st
	}
	for _, st := range fs {
		for _, a := range st.After {
			if _, ok := byID[a]; !ok {
				return nil, fmt.Errorf("fabric: flow %d depends on unknown flow %d", st.ID, a)
			}
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].ID < fs[j].ID })

	e.clock = 0
	var now, nextSample int64
	if opt.SampleEvery > 0 {
		nextSample = opt.SampleEvery
	}
	sample := func(t int64) {
		if opt.OnSample != nil {
			opt.OnSample(t, e.Counters())
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// admit flows whose start time has come and whose dependencies are done
		changed := false
		nextArrival := int64(math.MaxInt64)
		pending := 0
		for _, st := range fs {
			if st.done || st.active {
				continue
			}
			ready, at, failed := e.readyAt(st, byID)
			if failed != "" {
				st.done, st.result.Err = true, failed
				changed = true
				continue
			}
			if !ready {
				pending++
				continue
			}
			if at <= now {
				st.active, st.start = true, now
				st.result.Start = now
				changed = true
			} else {
				nextArrival = min(nextArrival, at)
				pending++
			}
		}
		active := e.activeFlows(fs)
		if changed {
			e.share(active)
		}
		if len(active) == 0 && pending == 0 {
			break
		}
		next := nextArrival
		for _, st := range active {
			next = min(next, st.finishAt)
		}
		if len(active) == 0 && next == math.MaxInt64 {
			return nil, fmt.Errorf("fabric: %d flows wait on dependencies that never finish", pending)
		}
		for opt.SampleEvery > 0 && nextSample < next {
			e.advance(active, nextSample-now)
			now = nextSample
			sample(now)
			nextSample += opt.SampleEvery
		}
		e.advance(active, next-now)
		now = next
		finished := false
		for _, st := range active {
			if st.finishAt <= now {
				st.active, st.done, finished = false, true, true
				st.wire = 0
				st.result.End = now + st.propDelay
			}
		}
		if finished {
			e.share(e.activeFlows(fs))
		}
	}
	e.drainQueues()
	sample(now)
	out := make([]Result, len(fs))
	for i, st := range fs {
		out[i] = st.result
	}
	return out, nil
}

// readyAt says whether every dependency finished, and when the flow may start.
func (e *FlowEngine) readyAt(st *flowState, byID map[int]*flowState) (bool, int64, string) {
	at := st.Start
	for _, a := range st.After {
		d := byID[a]
		if !d.done {
			return false, 0, ""
		}
		if d.result.Err != "" {
			return false, 0, fmt.Sprintf("dependency flow %d failed", a)
		}
		at = max(at, d.result.End)
	}
	return true, at, ""
}

func (e *FlowEngine) activeFlows(fs []*flowState) []*flowState {
	var out []*flowState
	for _, st := range fs {
		if st.active {
			out = append(out, st)
		}
	}
	return out
}

// share sets max-min fair rates by progressive filling, and each flow's
// finish time at that rate.
func (e *FlowEngine) share(active []*flowState) {
	for li := range e.lflows {
		e.lflows[li] = e.lflows[li][:0]
	}
	var links []int // links with at least one active flow
	for _, st := range active {
		st.rate = -1
		for _, li := range st.path {
			if len(e.lflows[li]) == 0 {
				links = append(links, li)
			}
			e.lflows[li] = append(e.lflows[li], st)
		}
	}
	left, users := e.left, e.users
	for _, li := range links {
		left[li], users[li] = e.topo.links[li].rate, len(e.lflows[li])
	}
	for remaining := len(active); remaining > 0; {
		best, bestLink := math.Inf(1), -1
		for _, li := range links {
			if users[li] > 0 {
				if s := left[li] / float64(users[li]); s < best {
					best, bestLink = s, li
				}
			}
		}
		if bestLink < 0 {
			break
		}
		for _, st := range e.lflows[bestLink] {
			if st.rate >= 0 {
				continue
			}
			st.rate = best
			remaining--
			for _, li := range st.path {
				left[li] -= best
				users[li]--
			}
		}
	}
	for _, st := range active {
		if st.rate <= 0 {
			st.finishAt = math.MaxInt64
			continue
		}
		st.finishAt = e.clock + int64(math.Ceil(st.wire*8/st.rate))
	}
}

// Configure changes the engine's configuration between runs (provisioned
// switch settings reach the twin this way).
func (e *FlowEngine) Configure(fn func(*Config)) { fn(&e.cfg) }

// Config is the engine's current configuration.
func (e *FlowEngine) Config() Config { return e.cfg }
