package emulator

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/perftest"
)

// recorder is a switch's telemetry endpoint that remembers what the twin
// published.
type recorder struct {
	every time.Duration
	mu    sync.Mutex
	ts    []time.Time
	idle  []bool
}

func (r *recorder) Publish(ts time.Time, _ map[string]*fabric.PortCounters) { r.add(ts, false) }
func (r *recorder) PublishIdle(ts time.Time, _ map[string]*fabric.PortCounters) {
	r.add(ts, true)
}
func (r *recorder) SampleInterval() time.Duration { return r.every }
func (r *recorder) Coalesced() uint64             { return 0 }

func (r *recorder) add(ts time.Time, idle bool) {
	r.mu.Lock()
	r.ts, r.idle = append(r.ts, ts), append(r.idle, idle)
	r.mu.Unlock()
}

// A schedule's samples lie on the grid epoch + k x interval: the first at
// the epoch, one per interval, the last at the first grid instant at or
// after the last flow's end, none marked idle; on both engines (the flow
// engine ends a flow a propagation delay after its last event, off its
// sample instants).
func TestScheduleSamplesOnTheSimulatedGrid(t *testing.T) {
	for _, tc := range []struct {
		engine string
		every  time.Duration
	}{
		{"packet", 100 * time.Microsecond},
		{"packet", 7 * time.Microsecond},
		{"flow", 100 * time.Microsecond},
		{"flow", 0}, // no collector: the first, the engine's last, the end
	} {
		t.Run(tc.engine+"/"+tc.every.String(), func(t *testing.T) {
			t.Parallel()
			var eng fabric.Engine = fabric.NewPacketEngine(mustTopo(t), fabric.DefaultConfig())
			if tc.engine == "flow" {
				eng = fabric.NewFlowEngine(mustTopo(t), fabric.DefaultConfig())
			}
			rec := &recorder{every: tc.every}
			tw := newTwin(eng, map[string]publisher{"leaf1": rec}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			lab := mustLab(t)
			h1, h2 := lab.Hosts[0].Name, lab.Hosts[1].Name
			epoch := time.Unix(1700000000, 0)
			s := &perftest.Schedule{ID: "s", Epoch: epoch, Flows: []perftest.Flow{
				{ID: 1, Src: h1, Dst: h2, Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1},
				{ID: 2, Src: h2, Dst: h1, Bytes: 256 << 10, MsgSize: 64 << 10, QPs: 1, Offset: 130 * time.Microsecond},
			}}
			base, res, err := tw.RunSchedule(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if !base.Equal(epoch) {
				t.Fatalf("base %v, want the epoch %v", base, epoch)
			}
			var end int64
			for _, r := range res {
				end = max(end, r.End)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if tc.every > 0 {
				if want := int((end+int64(tc.every)-1)/int64(tc.every)) + 1; len(rec.ts) != want {
					t.Errorf("%d samples over %d ns of traffic, want %d", len(rec.ts), end, want)
				}
			}
			for i, ts := range rec.ts {
				at := ts.Sub(epoch)
				if rec.idle[i] {
					t.Errorf("sample %d at epoch+%v marked idle", i, at)
				}
				if tc.every > 0 && at != time.Duration(i)*tc.every {
					t.Errorf("sample %d at epoch+%v, want epoch+%v", i, at, time.Duration(i)*tc.every)
				}
			}
			if n := len(rec.ts); n == 0 || rec.ts[0] != epoch || rec.ts[n-1].Before(epoch.Add(time.Duration(end))) {
				t.Errorf("samples %v..., want the first at the epoch and the last at or after its end (+%d ns)", rec.ts[:min(n, 1)], end)
			}
		})
	}
}

// While no schedule runs the twin samples on wall time, marked idle: once
// when the lab starts and once after each schedule, at most once every
// idleEvery, never repeating counters no schedule changed.
func TestIdleSamplesAreRareAndMarked(t *testing.T) {
	t.Parallel()
	rec := &recorder{every: 100 * time.Microsecond}
	tw := newTwin(fabric.NewFlowEngine(mustTopo(t), fabric.DefaultConfig()), map[string]publisher{"leaf1": rec},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tw.idle(ctx); close(done) }()
	idle := func() (n int, last time.Time) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for i, ts := range rec.ts {
			if rec.idle[i] {
				n, last = n+1, ts
			}
		}
		return n, last
	}
	time.Sleep(idleEvery + idleEvery/2)
	if n, _ := idle(); n != 1 {
		t.Errorf("%d idle samples in 1.5 idle periods with nothing simulated, want 1 (at the start)", n)
	}
	lab := mustLab(t)
	s := &perftest.Schedule{ID: "s", Epoch: time.Now(), Flows: []perftest.Flow{
		{ID: 1, Src: lab.Hosts[0].Name, Dst: lab.Hosts[1].Name, Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1}}}
	ran := time.Now()
	if _, _, err := tw.RunSchedule(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(idleEvery + idleEvery/2)
	cancel()
	<-done
	n, last := idle()
	if n != 2 || !last.After(ran) {
		t.Errorf("%d idle samples, the last at %v, want one more after the schedule (run at %v)", n, last, ran)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := 1; i < len(rec.ts); i++ {
		if !rec.ts[i].After(rec.ts[i-1]) {
			t.Errorf("sample %d at %v, after %v: the telemetry clock went back", i, rec.ts[i], rec.ts[i-1])
		}
	}
}
