package collectors

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// A counter a device cannot give is often one it never gives (a platform
// without it writes "N/A" at every sample): a gap per sample would grow
// with the run's length, in the archive and in the collector's memory.
// So a key's samples that carry unreadable values in a row, the first of
// them of the same leaf, make one gap: from the first such sample to the
// last, counting the samples and the values. The run ends, and its gap is
// written, at the key's next sample whose values are all readable, at
// another first leaf, or when collection ends.

// unreadableRuns are one stream's runs, by key (Unreadable.Key).
type unreadableRuns struct {
	o              GNMIOptions
	device, target string
	runs           map[string]*unreadableRun
}

// unreadableRun is a key's samples in a row with unreadable values.
type unreadableRun struct {
	prefix          string // the notifications' prefix (subStream.last's key)
	first           Unreadable
	since, until    int64 // sample time, unix ns
	samples, values uint64
}

// note takes a notification's unreadable values (bad; prefix is its
// prefix, ts its time) and appends to pts the gaps of the runs it ends.
func (r *unreadableRuns) note(pts []Point, prefix string, bad []Unreadable, ts int64) []Point {
	if len(bad) == 0 && len(r.runs) == 0 {
		return pts // the usual case
	}
	if r.runs == nil {
		r.runs = map[string]*unreadableRun{}
	}
	for _, u := range bad {
		run := r.runs[u.Key]
		if run != nil && run.first.Leaf != u.Leaf { // the value may change (-1, -2...): the leaf is the problem
			pts = append(pts, r.gap(run))
			run = nil
		}
		if run == nil {
			run = &unreadableRun{prefix: prefix, first: u, since: ts, until: ts}
			r.runs[u.Key] = run
		}
		run.since, run.until = min(run.since, ts), max(run.until, ts)
		run.samples++
		run.values += uint64(u.Count)
	}
	// This notification's keys that were readable end their runs.
	for _, key := range slices.Sorted(maps.Keys(r.runs)) { // sorted: the archive's order is the same every run
		if run := r.runs[key]; run.prefix == prefix && !hasKey(bad, key) {
			pts = append(pts, r.gap(run))
			delete(r.runs, key)
		}
	}
	return pts
}

// end ends every run, appending their gaps to pts (collection is over).
func (r *unreadableRuns) end(pts []Point) []Point {
	for _, key := range slices.Sorted(maps.Keys(r.runs)) {
		pts = append(pts, r.gap(r.runs[key]))
		delete(r.runs, key)
	}
	return pts
}

func (r *unreadableRuns) gap(run *unreadableRun) Point {
	u := run.first
	reason := fmt.Sprintf("counter values that are not unsigned integers, the first %s = %q", u.Leaf, u.Value)
	if u.Leaf == "" {
		reason = fmt.Sprintf("a key's counters that are not a JSON object: %q", u.Value)
	}
	g := gapPoint(r.o, r.device, r.target, reason, run.since, run.until)
	g.Path, g.Unreadable, g.UnreadableSamples = u.Key, run.values, run.samples
	return g.Point(r.o.Lab, r.o.Run, time.Unix(0, run.until))
}

func hasKey(bad []Unreadable, key string) bool {
	for _, u := range bad {
		if u.Key == key {
			return true
		}
	}
	return false
}
