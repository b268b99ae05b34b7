package emulator

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sort"
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

	mu     sync.Mutex // serialises simulations and queueing samples
	lastTs time.Time
	hostLB lbChoice // the hosts' module (twinhost.go)
	pub    pubQueue // samples on their way to the switches (twinpublish.go)
	// idleDone: no schedule ran since the last idle sample, whose
	// counters are therefore still current (idle).
	idleDone bool

	runsMu sync.Mutex
	runs   map[string]*scheduleRun // by schedule ID
	order  []string                // oldest first, to bound runs
	gather map[string]*gathering   // points whose flows are still coming in, by ID
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
	return &Twin{engine: engine, transport: engine.Counters().Transport, switches: switches, log: log, runs: map[string]*scheduleRun{}, gather: map[string]*gathering{}}
}

// RunSchedule simulates s once, however many callers ask for it, and
// returns every flow's result with the sim's time base. The simulation
// runs on its own and is cut short when every caller waiting for it has
// gone (their ctx ended: a point timed out or was interrupted), so that
// the next schedule can run; a caller that comes later starts it afresh.
func (t *Twin) RunSchedule(ctx context.Context, s *perftest.Schedule) (base time.Time, res map[int]fabric.Result, err error) {
	t.runsMu.Lock()
	r, ok := t.runs[s.ID]
	if !ok {
		r = t.startLocked(s)
	}
	r.waiting++
	t.runsMu.Unlock()
	return t.await(ctx, s.ID, r)
}

// startLocked starts simulating s (t.runsMu held).
func (t *Twin) startLocked(s *perftest.Schedule) *scheduleRun {
	sctx, cancel := context.WithCancel(context.Background())
	r := &scheduleRun{done: make(chan struct{}), cancel: cancel}
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
	return r
}

// await waits for r, counted in r.waiting, and cuts it short when the
// last caller waiting for it goes.
func (t *Twin) await(ctx context.Context, id string, r *scheduleRun) (time.Time, map[int]fabric.Result, error) {
	select {
	case <-r.done:
		t.runsMu.Lock()
		r.waiting--
		t.runsMu.Unlock()
		return r.base, r.results, r.err
	case <-ctx.Done():
		t.runsMu.Lock()
		t.leaveLocked(id, r)
		t.runsMu.Unlock()
		return time.Time{}, nil, ctx.Err()
	}
}

// leaveLocked drops a caller's wait for r, and cuts r short when it was
// the last one waiting (t.runsMu held).
func (t *Twin) leaveLocked(id string, r *scheduleRun) {
	if r.waiting--; r.waiting == 0 && !closed(r.done) {
		r.cancel()
		if t.runs[id] == r {
			delete(t.runs, id)
		}
	}
}

// gathering is a point's flows as its hosts' agents hand them in (each
// flow by its sender), until the point is complete.
type gathering struct {
	s       perftest.Schedule // ID and epoch of the point; Flows filled at the end
	flows   map[int]perftest.Flow
	total   int
	waiting int           // agents waiting for the point to complete
	ready   chan struct{} // closed when the run starts: run is set
	run     *scheduleRun
}

// SubmitFlows takes a host's part of a point's schedule (perftest.Schedule
// with Host and PointFlows set): the flows it sends join the point's, and
// when the point has all its flows the twin simulates them once, in flow
// id order (the plan's), however many hosts take part. Every host's call
// returns every flow's result with the sim's time base, as RunSchedule's.
// The flows thus come from the controller's plan, each once: no host's
// part is parsed by anyone but its own agent. A whole schedule (no Host)
// is simulated as it is (RunSchedule).
func (t *Twin) SubmitFlows(ctx context.Context, part *perftest.Schedule) (time.Time, map[int]fabric.Result, error) {
	if part.Host == "" {
		return t.RunSchedule(ctx, part)
	}
	id := part.ID
	t.runsMu.Lock()
	if r, ok := t.runs[id]; ok { // the point is already simulating or simulated
		r.waiting++
		t.runsMu.Unlock()
		return t.await(ctx, id, r)
	}
	g, ok := t.gather[id]
	if !ok {
		g = &gathering{s: perftest.Schedule{ID: id, Epoch: part.Epoch}, flows: map[int]perftest.Flow{},
			total: part.PointFlows, ready: make(chan struct{})}
		t.gather[id] = g
	}
	for _, f := range part.Flows {
		if f.Src == part.Host {
			g.flows[f.ID] = f
		}
	}
	g.waiting++
	if len(g.flows) >= g.total {
		g.s.Flows = make([]perftest.Flow, 0, len(g.flows))
		for _, f := range g.flows {
			g.s.Flows = append(g.s.Flows, f)
		}
		sort.Slice(g.s.Flows, func(i, j int) bool { return g.s.Flows[i].ID < g.s.Flows[j].ID })
		g.run = t.startLocked(&g.s)
		g.run.waiting = g.waiting // every agent gathered now waits for the run
		delete(t.gather, id)
		close(g.ready)
	}
	t.runsMu.Unlock()
	select {
	case <-g.ready:
		return t.await(ctx, id, g.run)
	case <-ctx.Done():
		t.runsMu.Lock()
		defer t.runsMu.Unlock()
		if closed(g.ready) { // the run started meanwhile
			t.leaveLocked(id, g.run)
		} else if g.waiting--; g.waiting == 0 && t.gather[id] == g {
			delete(t.gather, id) // nobody waits for the rest any more
		}
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
	began := time.Now()
	// Each point's switch figures are its own, as on a real lab where the
	// runner clears the queue watermarks before a point's traffic: a
	// point's peak is not an earlier point's, nor does a queue only
	// earlier points used show in its telemetry (gnmitarget publishes a
	// queue that sent or held bytes since the clear).
	t.engine.ClearWatermarks()
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
	t.log.Debug("schedule simulated", "schedule", s.ID, "flows", len(flows), "sim_ns", end, "samples", smp.samples, "wall", time.Since(began))
	return base, out, nil
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

// publishLocked queues a snapshot of the switches' counters stamped ts
// (never before the last one) for publication (twinpublish.go).
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
		cp := *v // the engine goes on counting
		per[k.Device][k.Port] = &cp
	}
	t.pub.push(snapshot{ts: ts, idle: idle, per: per, schemes: c.Schemes}, t.publish)
}

// publish hands one snapshot to every switch's telemetry endpoint, a few
// switches at a time (each endpoint first waits for its own subscribers,
// and encodes its ports: one switch after another left a core idle), and
// returns when all have it, so the next snapshot comes after it on every
// switch.
func (t *Twin) publish(s snapshot) {
	fewAtATime(maps.All(t.switches), func(name string, p publisher) {
		if s.idle {
			p.PublishIdle(s.ts, s.per[name])
		} else {
			p.Publish(s.ts, s.per[name])
		}
		publishSchemes(p, s, name) // twinschemes.go
	})
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
