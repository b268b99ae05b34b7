package emulator

import (
	"sync"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
)

// Publication runs beside the simulation: the twin queues a copy of each
// snapshot and one goroutine hands the queue to the switches' telemetry
// endpoints in order, so the engine computes the next sample interval
// while the previous snapshots go out (each endpoint still waits for its
// subscribers before taking the next: no sample is coalesced while they
// keep up). Publishing had been done by the simulation itself, which then
// ran at the pace of the slowest subscriber: at 1,024 hosts it was a third
// of the simulation's CPU, and the sim and telemetry could not use the
// machine's two cores at once. A schedule's run ends when its snapshots
// are all published (flush), as before.

// maxQueued bounds the snapshots waiting to be published: the simulation
// waits beyond it, so memory stays bounded (a snapshot of a 1,024-host
// fat-tree's switch ports is ~5 MB).
const maxQueued = 8

// snapshot is one sample of every switch's ports, copied.
type snapshot struct {
	ts   time.Time
	idle bool
	per  map[string]map[string]*fabric.PortCounters // device -> port -> counters
	// schemes are the switches' scheme counters (twinschemes.go), fresh
	// from the engine's Counters: not shared with it.
	schemes map[string]fabric.SchemeCounts
}

// pubQueue is the twin's publication queue; its zero value is ready.
type pubQueue struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when the queue shrinks or the drain ends
	queue   []snapshot
	running bool // a drain goroutine is publishing
}

// push queues s, waiting while maxQueued are queued, and starts a drain
// goroutine when none runs.
func (q *pubQueue) push(s snapshot, publish func(snapshot)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cond.L == nil {
		q.cond.L = &q.mu
	}
	for len(q.queue) >= maxQueued {
		q.cond.Wait()
	}
	q.queue = append(q.queue, s)
	if !q.running {
		q.running = true
		go q.drain(publish)
	}
}

func (q *pubQueue) drain(publish func(snapshot)) {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.running = false
			q.cond.Broadcast()
			q.mu.Unlock()
			return
		}
		s := q.queue[0]
		q.queue[0] = snapshot{}
		q.queue = q.queue[1:]
		q.cond.Broadcast()
		q.mu.Unlock()
		publish(s)
	}
}

// flush returns once every snapshot queued so far is published.
func (q *pubQueue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cond.L == nil {
		q.cond.L = &q.mu
	}
	for q.running {
		q.cond.Wait()
	}
}
