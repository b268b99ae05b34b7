package reports

import (
	"cmp"
	"sort"
	"strings"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
)

// Per-path utilisation: every switch port whose link goes to another
// switch (an uplink of a leaf, a downlink of a spine: the fabric's
// paths) is followed through its tx_bytes counter; its utilisation is its
// tx rate over the link's speed. A path is paused in a point when the
// port sent or received PFC PAUSE frames during the point's burst window
// (the whole window without a burst). docs/reports.md, "Paths".

// seriesPathsPerTier bounds the lines of a tier's utilisation plot: the
// busiest ports by mean utilisation.
const seriesPathsPerTier = 8

// PathUse is one fabric port's use in a point.
type PathUse struct {
	Device string  `json:"device"`
	Port   string  `json:"port"`
	Peer   string  `json:"peer"` // device:port at the link's other end
	Tier   string  `json:"tier"`
	Gbps   float64 `json:"link_gbps"`
	// MeanUtil is tx bytes over the window's known intervals over the
	// link's speed; PeakUtil the highest of its series' bins. Null when
	// the port has no tx_bytes samples.
	MeanUtil *float64 `json:"mean_util"`
	PeakUtil *float64 `json:"peak_util"`
	// PauseTx and PauseRx are the PAUSE frames (all priorities) the port
	// sent and received in the pause window (the burst, else the point).
	PauseTx uint64 `json:"pause_tx"`
	PauseRx uint64 `json:"pause_rx"`
}

// Paused says whether PAUSE frames crossed the port in the pause window.
func (u PathUse) Paused() bool { return u.PauseTx+u.PauseRx > 0 }

// fabricPorts are the switch ports of lab whose link ends at another
// switch, each with its peer and the link's speed.
func fabricPorts(lab *inventory.Lab) map[inventory.LinkEnd]PathUse {
	out := map[inventory.LinkEnd]PathUse{}
	if lab == nil {
		return out
	}
	tiers := tiersOf(lab)
	for _, l := range lab.Links {
		_, a := lab.Switch(l.A.Device)
		_, b := lab.Switch(l.B.Device)
		if !a || !b {
			continue
		}
		g := lab.LinkSpeedGbps(l)
		out[l.A] = PathUse{Device: l.A.Device, Port: l.A.Port, Peer: l.B.String(), Tier: tiers[l.A.Device], Gbps: g}
		out[l.B] = PathUse{Device: l.B.Device, Port: l.B.Port, Peer: l.A.String(), Tier: tiers[l.B.Device], Gbps: g}
	}
	return out
}

// seriesWatch follows, for one point, the port counters of its long
// flows and fabric ports through the telemetry pass.
type seriesWatch struct {
	lab      *inventory.Lab
	interval int64 // telemetry interval, ns (0: unknown)
	pick     *flowPick
	fabric   map[inventory.LinkEnd]PathUse
	want     map[pkey]bool      // byte counters to keep samples of
	samples  map[pkey][]sample  // in the window
	pause    map[pkey]*pauseAcc // per fabric port and pfc field
	pw       Span               // the pause window
}

// pauseAcc holds a PAUSE counter's value at the pause window's start (the
// last sample at or before it, else the first after) and end (the first
// sample at or after it, else the last before).
type pauseAcc struct{ from, to sample }

func newSeriesWatch(lab *inventory.Lab, pick *flowPick, interval int64) *seriesWatch {
	sw := &seriesWatch{lab: lab, interval: interval, pick: pick, fabric: fabricPorts(lab),
		want: map[pkey]bool{}, samples: map[pkey][]sample{}, pause: map[pkey]*pauseAcc{}}
	for _, r := range pick.long {
		if k, _, ok := pick.flowPort(lab, r); ok {
			sw.want[k] = true
		}
	}
	for e := range sw.fabric {
		sw.want[pkey{e.Device, e.Port, collectors.FieldTxBytes}] = true
	}
	return sw
}

// setWindow fixes the pause window: the burst's, else the point's.
func (sw *seriesWatch) setWindow(w window) {
	sw.pw = Span{w.start, w.end}
	if b := sw.pick.burst; b != nil {
		sw.pw = *b
	}
}

// sample takes one port telemetry point of the point's window w (or
// before it).
func (sw *seriesWatch) sample(p collectors.Point, ts int64, w window) {
	dev, port := p.Tags[collectors.TagDevice], p.Tags[collectors.TagPort]
	_, fabric := sw.fabric[inventory.LinkEnd{Device: dev, Port: port}]
	for f, raw := range p.Fields {
		k := pkey{dev, port, f}
		if sw.want[k] {
			// Only the window's: a sample before it may be the last of
			// the previous point, and the interval from it would spread
			// that gap's (zero) growth into the first bins.
			if v, ok := collectors.Uint(raw); ok && w.has(ts) {
				sw.samples[k] = append(sw.samples[k], sample{ts, v})
			}
			continue
		}
		if fabric && (prio(collectors.FieldPFCTx, f) || prio(collectors.FieldPFCRx, f)) {
			if v, ok := collectors.Uint(raw); ok && ts <= w.end {
				sw.pauseSample(k, sample{ts, v})
			}
		}
	}
}

func (sw *seriesWatch) pauseSample(k pkey, s sample) {
	a, ok := sw.pause[k]
	if !ok {
		sw.pause[k] = &pauseAcc{s, s}
		return
	}
	// from: the last at or before the start, else the earliest after it
	if nearerBefore(s.ts, a.from.ts, sw.pw.StartNs) {
		a.from = s
	}
	// to: the first at or after the end, else the latest before it (the
	// same pick with time reversed)
	if nearerBefore(-s.ts, -a.to.ts, -sw.pw.EndNs) {
		a.to = s
	}
}

// nearerBefore says whether a sample at ts is a better pick than one at
// cur for a counter's value at edge: the latest at or before edge, else
// the earliest after it.
func nearerBefore(ts, cur, edge int64) bool {
	if ts <= edge {
		return cur > edge || ts > cur
	}
	return cur > edge && ts < cur
}

// pauses are the PAUSE frames each fabric port sent and received ([0]
// tx, [1] rx) in the pause window, over its priorities; a counter that
// went down, or has no sample near the window, counts none.
func (sw *seriesWatch) pauses() map[inventory.LinkEnd][2]uint64 {
	out := map[inventory.LinkEnd][2]uint64{}
	for pk, a := range sw.pause {
		if a.to.v < a.from.v || a.to.ts < sw.pw.StartNs || a.from.ts > sw.pw.EndNs {
			continue
		}
		e := inventory.LinkEnd{Device: pk.device, Port: pk.port}
		n := out[e]
		if strings.HasSuffix(pk.field, "_tx") {
			n[0] += a.to.v - a.from.v
		} else {
			n[1] += a.to.v - a.from.v
		}
		out[e] = n
	}
	return out
}

// finishPaths sets the point's fabric port use and utilisation series
// (per tier, the busiest ports).
func (sw *seriesWatch) finishPaths(ps *PointSummary, w window, seriesPoints int) {
	byTier := map[string][]Series{}
	means := map[string][]float64{}
	pauses := sw.pauses()
	for e, u := range sw.fabric {
		k := pkey{e.Device, e.Port, collectors.FieldTxBytes}
		s := sw.samples[k]
		if len(s) > 1 && u.Gbps > 0 {
			sortSamples(s)
			if g, ok := meanGbps(s, w.start, w.end); ok {
				u.MeanUtil = ptr(g / u.Gbps)
			}
			b := binsFor(w, sw.interval, seriesPoints)
			rateBins(s, b)
			peak := 0.0
			for i := range b.v {
				b.v[i] /= u.Gbps
				if b.set[i] {
					peak = max(peak, b.v[i])
				}
			}
			u.PeakUtil = &peak
			byTier[u.Tier] = append(byTier[u.Tier], b.series(e.String()+" → "+u.Peer))
			means[u.Tier] = append(means[u.Tier], deref(u.MeanUtil))
		}
		u.PauseTx, u.PauseRx = pauses[e][0], pauses[e][1]
		ps.Paths = append(ps.Paths, u)
	}
	sort.Slice(ps.Paths, func(i, j int) bool {
		x, y := ps.Paths[i], ps.Paths[j]
		if x.Tier != y.Tier {
			return tierLess(x.Tier, y.Tier)
		}
		return cmp.Or(cmp.Compare(x.Device, y.Device), cmp.Compare(x.Port, y.Port)) < 0
	})
	for _, t := range sortedKeys(byTier) {
		ss, ms := byTier[t], means[t]
		idx := make([]int, len(ss))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			if ms[idx[a]] != ms[idx[b]] {
				return ms[idx[a]] > ms[idx[b]]
			}
			return ss[idx[a]].Name < ss[idx[b]].Name
		})
		var top []Series
		for _, i := range idx[:min(len(idx), seriesPathsPerTier)] {
			top = append(top, ss[i])
		}
		ps.PathSeries = append(ps.PathSeries, TierSeries{Tier: t, Series: top})
	}
	sort.SliceStable(ps.PathSeries, func(i, j int) bool { return tierLess(ps.PathSeries[i].Tier, ps.PathSeries[j].Tier) })
}

// TierSeries are the utilisation series of one switch tier's fabric
// ports.
type TierSeries struct {
	Tier   string
	Series []Series
}
