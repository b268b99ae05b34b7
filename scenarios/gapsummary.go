package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/reports"
)

// gapMetas are the manifest's entries for a run's gaps: one per gap,
// except that the gaps of unreadable values (collectors.Gap.Unreadable;
// one per sample and key, so a switch that writes "N/A" for a counter
// makes one per port at every sample) are one entry per device, target
// and reason, standing for all of them (GapMeta.Gaps). A warning per
// sample would bury every other one.
func gapMetas(gaps []collectors.Gap) []reports.GapMeta {
	var out []reports.GapMeta
	type key struct{ device, target, reason string }
	runs := map[key]*unreadableRun{}
	var order []key
	for _, g := range gaps {
		if g.Unreadable == 0 {
			out = append(out, reports.GapMeta{Device: g.Device, Target: g.Target, Path: g.Path,
				Since: g.Since.UTC(), Until: g.Until.UTC(), Missed: g.Missed(), Reason: g.Reason, Warning: g.String()})
			continue
		}
		k := key{g.Device, g.Target, g.Reason}
		r := runs[k]
		if r == nil {
			r = &unreadableRun{first: g, keys: map[string]bool{}}
			runs[k] = r
			order = append(order, k)
		}
		r.add(g)
	}
	for _, k := range order {
		out = append(out, runs[k].meta())
	}
	return out
}

// unreadableRun is the gaps of unreadable values of one device, target
// and reason.
type unreadableRun struct {
	first        collectors.Gap
	since, until time.Time
	samples      int
	values       uint64
	keys         map[string]bool
	names        []string // keys in the order first seen
}

func (r *unreadableRun) add(g collectors.Gap) {
	if r.samples == 0 || g.Since.Before(r.since) {
		r.since = g.Since
	}
	if g.Until.After(r.until) {
		r.until = g.Until
	}
	r.samples++
	r.values += g.Unreadable
	if !r.keys[g.Path] {
		r.keys[g.Path] = true
		r.names = append(r.names, g.Path)
	}
}

func (r *unreadableRun) meta() reports.GapMeta {
	if r.samples == 1 {
		g := r.first
		return reports.GapMeta{Device: g.Device, Target: g.Target, Path: g.Path, Since: g.Since.UTC(), Until: g.Until.UTC(),
			Reason: g.Reason, Unreadable: int64(g.Unreadable), Warning: g.String()}
	}
	const shown = 3
	keys := strings.Join(r.names[:min(len(r.names), shown)], ", ")
	if more := len(r.names) - shown; more > 0 {
		keys += fmt.Sprintf(" and %d more", more)
	}
	const ts = "15:04:05.000000"
	w := fmt.Sprintf("telemetry gap: device %s target %s: %d samples of %d keys (%s) from %s to %s UTC without %d of their values (%s)",
		r.first.Device, r.first.Target, r.samples, len(r.names), keys, r.since.UTC().Format(ts), r.until.UTC().Format(ts), r.values, r.first.Reason)
	return reports.GapMeta{Device: r.first.Device, Target: r.first.Target, Path: keys, Since: r.since.UTC(), Until: r.until.UTC(),
		Reason: r.first.Reason, Gaps: r.samples, Unreadable: int64(r.values), Warning: w}
}

// keptGaps is how many of the archive's gaps metas stand for.
func keptGaps(metas []reports.GapMeta) int {
	n := 0
	for _, m := range metas {
		n += max(m.Gaps, 1)
	}
	return n
}
