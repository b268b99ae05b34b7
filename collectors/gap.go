package collectors

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Gap is a span of a device's telemetry that is missing, read from a
// collector_gap point.
type Gap struct {
	Device, Target string
	// Path is what was missing: the subscription's paths after a broken
	// stream, or the one notification prefix a target coalesced.
	Path   string
	Reason string
	// Since and Until bound the missing samples (sample time): the last
	// sample before and the first after.
	Since, Until time.Time
	// Duplicates counts the samples a target coalesced away (exact); for a
	// broken stream it is 0 and Missed estimates the samples lost from
	// the span and the interval.
	Duplicates uint64
	Interval   time.Duration
	// BrokeAt and ResumedAt are wall-clock times of a stream break and of
	// the first sample after it (zero for coalescing).
	BrokeAt, ResumedAt time.Time
}

// GapOf reads a collector_gap point.
func GapOf(p Point) Gap {
	i := func(k string) int64 { v, _ := p.Fields[k].(int64); return v }
	ts := func(k string) time.Time {
		if v := i(k); v > 0 {
			return time.Unix(0, v)
		}
		return time.Time{}
	}
	path, _ := p.Fields["path"].(string)
	reason, _ := p.Fields["reason"].(string)
	dups, _ := Uint(p.Fields["duplicates"])
	return Gap{Device: p.Tags["device"], Target: p.Tags["target"], Path: path, Reason: reason,
		Since: ts("since_ns"), Until: ts("until_ns"), Duplicates: dups, Interval: time.Duration(i("interval_ns")),
		BrokeAt: ts("broke_at_ns"), ResumedAt: ts("resumed_at_ns")}
}

// Missed is how many samples the gap lost: the coalesced count, or, for a
// broken stream, at most the sample instants strictly between Since and
// Until (a target that samples only while something changes, as the
// emulated lab's twin, sent fewer).
func (g Gap) Missed() int64 {
	if g.Duplicates > 0 {
		return int64(g.Duplicates)
	}
	if g.Interval <= 0 || !g.Until.After(g.Since) {
		return 0
	}
	return max(int64((g.Until.Sub(g.Since)-1)/g.Interval), 0)
}

// String is the gap as a run warning: device, path, time range, counts.
func (g Gap) String() string {
	const ts = "15:04:05.000000"
	what := fmt.Sprintf("%d samples coalesced by the target", g.Duplicates)
	if g.Duplicates == 0 {
		// An upper bound: a switch samples every interval, the fabric
		// twin only while traffic runs.
		what = fmt.Sprintf("up to %d samples missed at %v", g.Missed(), g.Interval)
		if !g.BrokeAt.IsZero() && !g.ResumedAt.IsZero() {
			what += fmt.Sprintf("; stream down %v (broke %s, samples again %s)", g.ResumedAt.Sub(g.BrokeAt).Round(time.Millisecond),
				g.BrokeAt.UTC().Format(ts), g.ResumedAt.UTC().Format(ts))
		}
	}
	return fmt.Sprintf("telemetry gap: device %s target %s path %s: %s to %s UTC (%v): %s (%s)",
		g.Device, g.Target, g.Path, g.Since.UTC().Format(ts), g.Until.UTC().Format(ts), g.Until.Sub(g.Since), what, g.Reason)
}

// GapRecorder passes points through to a sink and keeps the gaps among
// them, for the run's outcome.
type GapRecorder struct {
	next Sink
	mu   sync.Mutex
	gaps []Gap
}

// NewGapRecorder wraps next.
func NewGapRecorder(next Sink) *GapRecorder { return &GapRecorder{next: next} }

// Write records the collector_gap points of pts and passes pts on.
func (r *GapRecorder) Write(ctx context.Context, pts []Point) error {
	for _, p := range pts {
		if p.Measurement == "collector_gap" {
			r.mu.Lock()
			r.gaps = append(r.gaps, GapOf(p))
			r.mu.Unlock()
		}
	}
	return r.next.Write(ctx, pts)
}

// Close closes the next sink.
func (r *GapRecorder) Close(ctx context.Context) error { return r.next.Close(ctx) }

// Gaps are the gaps seen so far.
func (r *GapRecorder) Gaps() []Gap {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Gap(nil), r.gaps...)
}
