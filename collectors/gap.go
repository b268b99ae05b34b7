package collectors

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Fields of a collector_gap point.
const (
	GapReason      = "reason"
	GapPath        = "path"
	GapSinceNs     = "since_ns"
	GapUntilNs     = "until_ns"
	GapDuplicates  = "duplicates"
	GapUnreadable  = "unreadable"
	GapUnreadableS = "unreadable_samples"
	GapIntervalNs  = "interval_ns"
	GapBrokeAtNs   = "broke_at_ns"
	GapResumedAtNs = "resumed_at_ns"
)

// Gap is a span of a device's telemetry that is missing: the one record
// of a collector_gap point, which every writer makes with Point and every
// reader reads with GapOf.
type Gap struct {
	// Device is the switch, or for an RNIC the RDMA device of Host.
	Device, Target, Host string
	// Path is what was missing: the subscription's paths after a broken
	// stream, the one notification prefix a target coalesced, or the key
	// whose values were unreadable; spelled as the subscription paths are
	// (FormatPath).
	Path   string
	Reason string
	// Since and Until bound the missing samples (sample time): the last
	// sample before and the first after.
	Since, Until time.Time
	// Duplicates counts the samples a target coalesced away (exact); for a
	// broken stream it is 0 and Missed estimates the samples lost from
	// the span and the interval.
	Duplicates uint64
	// Unreadable counts values that were no counters in UnreadableSamples
	// samples of one key in a row, from Since to Until (the samples came;
	// those values are what is missing: unreadable.go).
	Unreadable        uint64
	UnreadableSamples uint64
	Interval          time.Duration
	// BrokeAt and ResumedAt are wall-clock times of a stream break and of
	// the first sample after it (zero for coalescing).
	BrokeAt, ResumedAt time.Time
}

// Point is the gap as a collector_gap point of lab and run, stamped at
// (when the gap was noticed). Zero times, counts and empty names are left
// out.
func (g Gap) Point(lab, run string, at time.Time) Point {
	tags := map[string]string{TagLab: lab, TagRun: run, TagDevice: g.Device}
	for k, v := range map[string]string{TagTarget: g.Target, TagHost: g.Host} {
		if v != "" {
			tags[k] = v
		}
	}
	fields := map[string]any{GapReason: g.Reason, GapSinceNs: unixNs(g.Since), GapUntilNs: unixNs(g.Until)}
	if g.Path != "" {
		fields[GapPath] = g.Path
	}
	if g.Duplicates > 0 {
		fields[GapDuplicates] = g.Duplicates
	}
	if g.Unreadable > 0 {
		fields[GapUnreadable], fields[GapUnreadableS] = g.Unreadable, g.UnreadableSamples
	}
	if g.Interval > 0 {
		fields[GapIntervalNs] = int64(g.Interval)
	}
	for k, t := range map[string]time.Time{GapBrokeAtNs: g.BrokeAt, GapResumedAtNs: g.ResumedAt} {
		if !t.IsZero() {
			fields[k] = t.UnixNano()
		}
	}
	return Point{Measurement: MeasGap, Time: at, Tags: tags, Fields: fields}
}

// unixNs is t in unix ns, 0 for the zero time (as GapOf reads it back).
func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// GapOf reads a collector_gap point.
func GapOf(p Point) Gap {
	i := func(k string) int64 { v, _ := Uint(p.Fields[k]); return int64(v) } // i or u, as Span reads them
	ts := func(k string) time.Time {
		if v := i(k); v > 0 {
			return time.Unix(0, v)
		}
		return time.Time{}
	}
	path, _ := p.Fields[GapPath].(string)
	reason, _ := p.Fields[GapReason].(string)
	dups, _ := Uint(p.Fields[GapDuplicates])
	bad, _ := Uint(p.Fields[GapUnreadable])
	badSamples, _ := Uint(p.Fields[GapUnreadableS])
	return Gap{Device: p.Tags[TagDevice], Target: p.Tags[TagTarget], Host: p.Tags[TagHost], Path: path, Reason: reason,
		Since: ts(GapSinceNs), Until: ts(GapUntilNs), Duplicates: dups, Unreadable: bad, UnreadableSamples: badSamples, Interval: time.Duration(i(GapIntervalNs)),
		BrokeAt: ts(GapBrokeAtNs), ResumedAt: ts(GapResumedAtNs)}
}

// Span is the gap's since..until in unix ns, read from a collector_gap
// point (with Uint, as GapOf reads them); false when the point lacks them.
func Span(p Point) (since, until int64, ok bool) {
	s, ok1 := Uint(p.Fields[GapSinceNs])
	u, ok2 := Uint(p.Fields[GapUntilNs])
	return int64(s), int64(u), ok1 && ok2
}

// Missed is how many samples the gap lost: the coalesced count, none for
// unreadable values (the samples came), or, for a broken stream, at most
// the sample instants strictly between Since and Until (a target that
// samples only while something changes, as the emulated lab's twin, sent
// fewer).
func (g Gap) Missed() int64 {
	if g.Duplicates > 0 {
		return int64(g.Duplicates)
	}
	if g.Unreadable > 0 {
		return 0 // the samples came, short of some values
	}
	if g.Interval <= 0 || !g.Until.After(g.Since) {
		return 0
	}
	return max(int64((g.Until.Sub(g.Since)-1)/g.Interval), 0)
}

// GapClock is how warnings print a gap's times (in UTC).
const GapClock = "15:04:05.000000"

// String is the gap as a run warning: device, path, time range, counts.
func (g Gap) String() string {
	what := fmt.Sprintf("%d samples coalesced by the target", g.Duplicates)
	switch {
	case g.Unreadable > 0:
		what = fmt.Sprintf("%d samples without %d of their values", g.UnreadableSamples, g.Unreadable)
		if g.UnreadableSamples == 1 {
			what = fmt.Sprintf("one sample without %d of its values", g.Unreadable)
		}
	case g.Duplicates == 0:
		// An upper bound: a switch samples every interval, the fabric
		// twin only while traffic runs.
		what = fmt.Sprintf("up to %d samples missed at %v", g.Missed(), g.Interval)
		if !g.BrokeAt.IsZero() && !g.ResumedAt.IsZero() {
			what += fmt.Sprintf("; stream down %v (broke %s, samples again %s)", g.ResumedAt.Sub(g.BrokeAt).Round(time.Millisecond),
				g.BrokeAt.UTC().Format(GapClock), g.ResumedAt.UTC().Format(GapClock))
		}
	}
	span := fmt.Sprintf("%s to %s UTC (%v)", g.Since.UTC().Format(GapClock), g.Until.UTC().Format(GapClock), g.Until.Sub(g.Since))
	if g.Until.Equal(g.Since) {
		span = "at " + g.Since.UTC().Format(GapClock) + " UTC"
	}
	return fmt.Sprintf("telemetry gap: device %s target %s path %s: %s: %s (%s)", g.Device, g.Target, g.Path, span, what, g.Reason)
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
		if p.Measurement == MeasGap {
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
