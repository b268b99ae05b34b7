package scenarios

import (
	"context"
	"sync"
	"time"

	"github.com/labctl/labctl/collectors"
)

// watermarkSink passes points through and remembers, per device, the newest
// sample time seen, so the runner can wait until telemetry has caught up
// with the end of the traffic before it closes the collectors.
type watermarkSink struct {
	next collectors.Sink
	mu   sync.Mutex
	seen map[string]time.Time
	n    int
}

func newWatermarkSink(next collectors.Sink) *watermarkSink {
	return &watermarkSink{next: next, seen: map[string]time.Time{}}
}

func (w *watermarkSink) Write(ctx context.Context, pts []collectors.Point) error {
	w.mu.Lock()
	for _, p := range pts {
		d := p.Tags[collectors.TagDevice]
		if p.Time.After(w.seen[d]) {
			w.seen[d] = p.Time
		}
	}
	w.n += len(pts)
	w.mu.Unlock()
	return w.next.Write(ctx, pts)
}

func (w *watermarkSink) Close(ctx context.Context) error { return w.next.Close(ctx) }

// waitFor blocks until every device has a sample at or after t, or the
// timeout passes; it returns the devices that lag.
func (w *watermarkSink) waitFor(ctx context.Context, devices []string, t time.Time, timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		var lag []string
		w.mu.Lock()
		for _, d := range devices {
			if w.seen[d].Before(t) {
				lag = append(lag, d)
			}
		}
		w.mu.Unlock()
		if len(lag) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return lag
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *watermarkSink) points() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}
