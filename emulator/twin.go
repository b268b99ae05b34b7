package emulator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/perftest"
)

// publisher is what the twin needs of a switch's telemetry endpoint.
type publisher interface {
	Publish(ts time.Time, ports map[string]*fabric.PortCounters)     // traffic
	PublishIdle(ts time.Time, ports map[string]*fabric.PortCounters) // no traffic
	SampleInterval() time.Duration
	Coalesced() uint64 // samples lost to coalescing, in all
}

// Twin runs schedules on a fabric engine, one at a time, and keeps the
// telemetry clock: samples are stamped epoch+sim time while a schedule runs
// (twinsample.go) and wall time while idle, never go backwards, and are
// marked idle when taken while no schedule runs.
type Twin struct {
	engine fabric.Engine
	// transport: the engine keeps the RNIC transport counters
	// (fabric.Counters.Transport); it never changes.
	transport bool
	switches  map[string]publisher
	log       *slog.Logger

	// nicPrio is the priority a host's RNIC sends a traffic class on
	// (Lab.nicPriority); nil: priority 3.
	nicPrio func(host, dev string, tclass int) int

	mu     sync.Mutex // serialises simulations and publishing
	lastTs time.Time
	// idleDone: no schedule ran since the last idle sample, whose
	// counters are therefore still current (idle).
	idleDone bool

	runsMu sync.Mutex
	runs   map[string]*scheduleRun // by schedule ID
	order  []string                // oldest first, to bound runs
	parsed map[string]*sharedSchedule
}

// keepRuns is how many schedules' results a long-lived lab remembers: every
// host agent of a point fetches them within seconds of each other, and a
// runner runs one point at a time.
const keepRuns = 8

type scheduleRun struct {
	done    chan struct{}
	base    time.Time // sim time 0
	results map[int]fabric.Result
	err     error
	waiting int                // RunSchedule calls waiting for the result
	cancel  context.CancelFunc // cuts the simulation short
}

func newTwin(engine fabric.Engine, switches map[string]publisher, log *slog.Logger) *Twin {
	return &Twin{engine: engine, transport: engine.Counters().Transport, switches: switches, log: log, runs: map[string]*scheduleRun{}, parsed: map[string]*sharedSchedule{}}
}

// RunSchedule simulates s once, however many host agents ask for it, and
// returns every flow's result with the sim's time base. The simulation
// runs on its own and is cut short when every caller waiting for it has
// gone (their ctx ended: a point timed out or was interrupted), so that
// the next schedule can run; a caller that comes later starts it afresh.
func (t *Twin) RunSchedule(ctx context.Context, s *perftest.Schedule) (base time.Time, res map[int]fabric.Result, err error) {
	t.runsMu.Lock()
	r, ok := t.runs[s.ID]
	if !ok {
		sctx, cancel := context.WithCancel(context.Background())
		r = &scheduleRun{done: make(chan struct{}), cancel: cancel}
		t.runs[s.ID] = r
		t.order = append(t.order, s.ID)
		if len(t.order) > keepRuns {
			delete(t.runs, t.order[0])
			t.order = t.order[1:]
		}
		go func() {
			defer close(r.done)
			defer cancel()
			r.base, r.results, r.err = t.simulate(sctx, s)
		}()
	}
	r.waiting++
	t.runsMu.Unlock()
	select {
	case <-r.done:
		t.runsMu.Lock()
		r.waiting--
		t.runsMu.Unlock()
		return r.base, r.results, r.err
	case <-ctx.Done():
		t.runsMu.Lock()
		if r.waiting--; r.waiting == 0 && !closed(r.done) {
			r.cancel()
			if t.runs[s.ID] == r {
				delete(t.runs, s.ID)
			}
		}
		t.runsMu.Unlock()
		return time.Time{}, nil, ctx.Err()
	}
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (t *Twin) simulate(ctx context.Context, s *perftest.Schedule) (time.Time, map[int]fabric.Result, error) {
	flows := make([]fabric.Flow, len(s.Flows))
	for i, f := range s.Flows {
		prio := 3
		if f.TClass > 0 && t.nicPrio != nil {
			prio = t.nicPrio(f.Src, f.SrcDev, f.TClass)
		}
		flows[i] = fabric.Flow{
			ID: f.ID, Src: f.Src, Dst: f.Dst, Priority: prio, TOS: f.TClass,
			// What perftest really moves: whole messages, per QP.
			Bytes: f.MsgSize * f.Iterations() * int64(max(f.QPs, 1)),
			Start: int64(f.Offset), After: f.After,
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	base := s.Epoch
	if err := ctx.Err(); err != nil { // nobody waits any more
		return base, nil, fmt.Errorf("fabric twin: schedule %s: not simulated: %w", s.ID, err)
	}
	if !base.After(t.lastTs) {
		base = t.lastTs.Add(time.Microsecond)
	}
	smp := t.startSampling(s.ID, base)
	results, err := t.engine.Run(ctx, flows, fabric.RunOptions{SampleEvery: smp.every, OnSample: smp.sample})
	if err != nil {
		if ctx.Err() != nil {
			t.log.Warn("simulation cut short: every agent waiting for it has gone", "schedule", s.ID)
			return base, nil, fmt.Errorf("fabric twin: schedule %s: simulation cut short: %w", s.ID, err)
		}
		return base, nil, fmt.Errorf("fabric twin: schedule %s: %w", s.ID, err)
	}
	out := make(map[int]fabric.Result, len(results))
	var end int64
	for _, r := range results {
		r.Path = nil // agents need times and errors only; results are kept a while
		out[r.ID] = r
		end = max(end, r.End)
	}
	smp.finish(end)
	t.log.Debug("schedule simulated", "schedule", s.ID, "flows", len(flows), "sim_ns", end)
	return base, out, nil
}

// sharedSchedule is one parsed schedule that every host agent of a point
// reads: a point's schedule is the same document on every host, and
// decoding it once per host would multiply its memory by the hosts.
type sharedSchedule struct {
	once  sync.Once
	s     *perftest.Schedule
	err   error
	users int
}

// schedule returns the schedule id, parsed by load the first time one of
// the agents holding it asks; release drops the agent's hold, and the
// parse with the last.
func (t *Twin) schedule(id string, load func() (*perftest.Schedule, error)) (s *perftest.Schedule, release func(), err error) {
	t.runsMu.Lock()
	p, ok := t.parsed[id]
	if !ok {
		p = &sharedSchedule{}
		t.parsed[id] = p
	}
	p.users++
	t.runsMu.Unlock()
	release = func() {
		t.runsMu.Lock()
		defer t.runsMu.Unlock()
		if p.users--; p.users == 0 && t.parsed[id] == p {
			delete(t.parsed, id)
		}
	}
	p.once.Do(func() { p.s, p.err = load() })
	if p.err != nil {
		release()
		return nil, nil, p.err
	}
	return p.s, release, nil
}

// sampleInterval is the finest interval any collector asked for.
func (t *Twin) sampleInterval() time.Duration {
	var d time.Duration
	for _, p := range t.switches {
		if i := p.SampleInterval(); i > 0 && (d == 0 || i < d) {
			d = i
		}
	}
	return d
}

func (t *Twin) publishLocked(ts time.Time, c *fabric.Counters, idle bool) {
	if !ts.After(t.lastTs) {
		ts = t.lastTs.Add(time.Nanosecond)
	}
	t.lastTs = ts
	per := map[string]map[string]*fabric.PortCounters{}
	for k, v := range c.Ports {
		if _, ok := t.switches[k.Device]; !ok {
			continue
		}
		if per[k.Device] == nil {
			per[k.Device] = map[string]*fabric.PortCounters{}
		}
		per[k.Device][k.Port] = v
	}
	for name, p := range t.switches {
		if idle {
			p.PublishIdle(ts, per[name])
		} else {
			p.Publish(ts, per[name])
		}
	}
}

// idleEvery is how often the twin looks whether to take an idle sample.
const idleEvery = time.Second

// idle publishes the counters on wall time, marked idle, when the lab has
// started and after each schedule, at most once every idleEvery: the
// devices' values at a recent wall time, and the subscribers' baseline.
// Counters change only while a schedule runs, and a point's own samples
// (twinsample.go) carry its traffic, so an idle sample between schedules
// would repeat the last one.
func (t *Twin) idle(ctx context.Context) {
	tick := time.NewTicker(idleEvery)
	defer tick.Stop()
	for {
		t.mu.Lock()
		if now := time.Now(); !t.idleDone && now.After(t.lastTs) {
			t.publishLocked(now, t.engine.Counters(), true)
			t.idleDone = true
		}
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// HostCounters returns the counters of a host's RNIC port, and whether the
// engine keeps its transport counters (see fabric.Counters.Transport).
func (t *Twin) HostCounters(host, dev string) (pc fabric.PortCounters, transport bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pc, _ = t.engine.PortCounters(fabric.PortKey{Device: host, Port: dev})
	return pc, t.transport
}
