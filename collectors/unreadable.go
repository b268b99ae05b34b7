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

// unreadableRun is a key's samples in a row with unreadable values.
type unreadableRun struct {
	first           Unreadable
	since, until    int64 // sample time, unix ns
	samples, values uint64
}

func (r *unreadableRun) add(u Unreadable, ts int64) {
	r.since, r.until = min(r.since, ts), max(r.until, ts)
	r.samples++
	r.values += uint64(u.Count)
}

// noteUnreadable takes a notification's unreadable values (bad; prefix is
// its prefix, ts its time) and appends to pts the gaps of the runs it
// ends. The runs of a prefix's keys are kept under that prefix, so a
// notification looks only at its own; the usual one, with no unreadable
// value while no run of its prefix goes on, costs a length check (and a
// lookup while another prefix has a run).
func (s *subStream) noteUnreadable(pts []Point, prefix string, bad []Unreadable, ts int64) []Point {
	if len(bad) == 0 && len(s.unreadable) == 0 {
		return pts
	}
	runs := s.unreadable[prefix]
	if len(bad) == 0 && len(runs) == 0 {
		return pts // another prefix has a run, this one none to end
	}
	kept := runs[:0] // in place: a run goes on, or its gap is written
	for _, r := range runs {
		if i := slices.IndexFunc(bad, func(u Unreadable) bool { return u.Key == r.first.Key }); i >= 0 && bad[i].Leaf == r.first.Leaf {
			r.add(bad[i], ts) // the value may change (-1, -2...): the leaf is the problem
			kept = append(kept, r)
		} else {
			pts = append(pts, s.unreadableGap(r))
		}
	}
	for _, u := range bad {
		if !slices.ContainsFunc(kept, func(r *unreadableRun) bool { return r.first.Key == u.Key }) {
			r := &unreadableRun{first: u, since: ts, until: ts}
			r.add(u, ts)
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(s.unreadable, prefix)
	} else {
		s.unreadable[prefix] = kept
	}
	return pts
}

// endUnreadable ends every run (collection is over), appending their gaps
// to pts in the order of their prefixes.
func (s *subStream) endUnreadable(pts []Point) []Point {
	for _, prefix := range slices.Sorted(maps.Keys(s.unreadable)) {
		for _, r := range s.unreadable[prefix] {
			pts = append(pts, s.unreadableGap(r))
		}
		delete(s.unreadable, prefix)
	}
	return pts
}

// unreadableGap is the collector_gap of a run of unreadable samples.
func (s *subStream) unreadableGap(r *unreadableRun) Point {
	u := r.first
	reason := fmt.Sprintf("counter values that are not unsigned integers, the first %s = %q", u.Leaf, u.Value)
	if u.Leaf == "" {
		reason = fmt.Sprintf("a key's counters that are not a JSON object: %q", u.Value)
	}
	g := gapPoint(s.o, s.t.Device, s.target, reason, r.since, r.until)
	g.Path, g.Unreadable, g.UnreadableSamples = u.Key, r.values, r.samples
	return g.Point(s.o.Lab, s.o.Run, time.Unix(0, r.until))
}
