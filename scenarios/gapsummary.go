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
// one per key and run of samples, so a switch that writes "N/A" for a
// counter makes one per port, more if it comes and goes) are one entry
// per device, target and reason, standing for all of them
// (GapMeta.Gaps). A warning per port would bury every other one.
func gapMetas(gaps []collectors.Gap) []reports.GapMeta {
	var out []reports.GapMeta
	type key struct{ device, target, reason string }
	groups := map[key]*unreadableGroup{}
	var order []key
	for _, g := range gaps {
		if g.Unreadable == 0 {
			out = append(out, reports.GapMeta{Device: g.Device, Target: g.Target, Path: g.Path,
				Since: g.Since.UTC(), Until: g.Until.UTC(), Missed: g.Missed(), Reason: g.Reason, Warning: g.String()})
			continue
		}
		k := key{g.Device, g.Target, g.Reason}
		r := groups[k]
		if r == nil {
			r = &unreadableGroup{first: g, keys: map[string]bool{}}
			groups[k] = r
			order = append(order, k)
		}
		r.add(g)
	}
	for _, k := range order {
		out = append(out, groups[k].meta())
	}
	return out
}

// unreadableGroup is the gaps of unreadable values of one device, target
// and reason.
type unreadableGroup struct {
	first           collectors.Gap
	since, until    time.Time
	gaps            int
	samples, values uint64
	keys            map[string]bool
	names           []string // keys in the order first seen
}

func (r *unreadableGroup) add(g collectors.Gap) {
	if r.gaps == 0 || g.Since.Before(r.since) {
		r.since = g.Since
	}
	if g.Until.After(r.until) {
		r.until = g.Until
	}
	r.gaps++
	r.samples += max(g.UnreadableSamples, 1)
	r.values += g.Unreadable
	if !r.keys[g.Path] {
		r.keys[g.Path] = true
		r.names = append(r.names, g.Path)
	}
}

func (r *unreadableGroup) meta() reports.GapMeta {
	if r.gaps == 1 {
		g := r.first
		return reports.GapMeta{Device: g.Device, Target: g.Target, Path: g.Path, Since: g.Since.UTC(), Until: g.Until.UTC(),
			Reason: g.Reason, Unreadable: int64(g.Unreadable), Warning: g.String()}
	}
	const shown = 3
	keys := strings.Join(r.names[:min(len(r.names), shown)], ", ")
	if more := len(r.names) - shown; more > 0 {
		keys += fmt.Sprintf(" and %d more", more)
	}
	w := fmt.Sprintf("telemetry gap: device %s target %s: %d samples of %d keys (%s) from %s to %s UTC without %d of their values (%s)",
		r.first.Device, r.first.Target, r.samples, len(r.names), keys,
		r.since.UTC().Format(collectors.GapClock), r.until.UTC().Format(collectors.GapClock), r.values, r.first.Reason)
	return reports.GapMeta{Device: r.first.Device, Target: r.first.Target, Path: keys, Since: r.since.UTC(), Until: r.until.UTC(),
		Reason: r.first.Reason, Gaps: r.gaps, Unreadable: int64(r.values), Warning: w}
}

// keptGaps is how many of the archive's gaps metas stand for.
func keptGaps(metas []reports.GapMeta) int {
	n := 0
	for _, m := range metas {
		n += max(m.Gaps, 1)
	}
	return n
}
