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
	Publish(ts time.Time, ports map[string]*fabric.PortCounters)
	SampleInterval() time.Duration
}

// Twin runs schedules on a fabric engine, one at a time, and keeps the
// telemetry clock: samples are stamped epoch+sim time while a schedule runs
// and wall time while idle, and never go backwards.
type Twin struct {
	engine   fabric.Engine
	switches map[string]publisher
	log      *slog.Logger

	mu     sync.Mutex // serialises simulations and publishing
	lastTs time.Time

	runsMu sync.Mutex
	runs   map[string]*scheduleRun // by schedule ID
	order  []string                // oldest first, to bound runs
}

// keepRuns is how many schedules' results a long-lived lab remembers: every
// host agent of a point fetches them within seconds of each other.
const keepRuns = 64

type scheduleRun struct {
	done    chan struct{}
	base    time.Time // sim time 0
	results map[int]fabric.Result
	err     error
}

func newTwin(engine fabric.Engine, switches map[string]publisher, log *slog.Logger) *Twin {
	return &Twin{engine: engine, switches: switches, log: log, runs: map[string]*scheduleRun{}}
}

// RunSchedule simulates s once, however many host agents ask for it, and
// returns every flow's result with the sim's time base.
func (t *Twin) RunSchedule(ctx context.Context, s *perftest.Schedule) (base time.Time, res map[int]fabric.Result, err error) {
	t.runsMu.Lock()
	r, ok := t.runs[s.ID]
	if !ok {
		r = &scheduleRun{done: make(chan struct{})}
		t.runs[s.ID] = r
		t.order = append(t.order, s.ID)
		if len(t.order) > keepRuns {
			delete(t.runs, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.runsMu.Unlock()
	if !ok {
		r.base, r.results, r.err = t.simulate(s)
		close(r.done)
	}
	select {
	case <-r.done:
		return r.base, r.results, r.err
	case <-ctx.Done():
		return time.Time{}, nil, ctx.Err()
	}
}

func (t *Twin) simulate(s *perftest.Schedule) (time.Time, map[int]fabric.Result, error) {
	flows := make([]fabric.Flow, len(s.Flows))
	for i, f := range s.Flows {
		flows[i] = fabric.Flow{
			ID: f.ID, Src: f.Src, Dst: f.Dst, Priority: 3,
			// What perftest really moves: whole messages, per QP.
			Bytes: f.MsgSize * f.Iterations() * int64(max(f.QPs, 1)),
			Start: int64(f.Offset), After: f.After,
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	base := s.Epoch
	if !base.After(t.lastTs) {
		base = t.lastTs.Add(time.Microsecond)
	}
	opt := fabric.RunOptions{SampleEvery: int64(t.sampleInterval())}
	opt.OnSample = func(now int64, c *fabric.Counters) { t.publishLocked(base.Add(time.Duration(now)), c) }
	// The simulation is pure CPU on a snapshot of the schedule; it is not
	// cut short by one agent going away, since the others share its result.
	results, err := t.engine.Run(context.Background(), flows, opt)
	if err != nil {
		return base, nil, fmt.Errorf("fabric twin: schedule %s: %w", s.ID, err)
	}
	out := make(map[int]fabric.Result, len(results))
	var end int64
	for _, r := range results {
		out[r.ID] = r
		end = max(end, r.End)
	}
	t.publishLocked(base.Add(time.Duration(end)+time.Nanosecond), t.engine.Counters())
	t.log.Debug("schedule simulated", "schedule", s.ID, "flows", len(flows), "sim_ns", end)
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

func (t *Twin) publishLocked(ts time.Time, c *fabric.Counters) {
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
		p.Publish(ts, per[name])
	}
}

// idle publishes the current counters on wall time while no schedule runs,
// so collectors see a baseline and later samples; nothing changes between
// schedules, so it ticks no faster than every 250ms.
func (t *Twin) idle(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		t.mu.Lock()
		if now := time.Now(); now.After(t.lastTs) {
			t.publishLocked(now, t.engine.Counters())
		}
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// HostCounters returns the counters of a host's RNIC port.
func (t *Twin) HostCounters(host, dev string) fabric.PortCounters {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pc, ok := t.engine.Counters().Ports[fabric.PortKey{Device: host, Port: dev}]; ok {
		return *pc
	}
	return fabric.PortCounters{}
}
