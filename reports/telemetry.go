package reports

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
)

// window is a point's telemetry span: [start, end], end being the
// traffic's end (trafficEnd) plus a margin. RNIC counters are read by the
// runner once before and once after each point, over SSH, so their
// "after" sample may come well past end: it is the first at or after
// trafficEnd and before hostEnd, the next point's start. A point that
// sent no traffic has no window (none): nothing is counted for it.
type window struct {
	start, end, trafficEnd, hostEnd int64
	none                            bool
	// own, when set, is the point whose lab was its own (an executor
	// ran it): only samples tagged collectors.TagPoint=own are its.
	own string
}

func (w window) has(ts int64) bool { return !w.none && ts >= w.start && ts <= w.end }

// windows are the points' [start, end+margin] spans; the margin never
// reaches into the next point, whose counters would otherwise leak in. A
// point without an end (it failed before any flow started) gets none: a
// window at time 0 would count its counters since the devices booted.
func windows(metas []PointMeta, margin int64) []window {
	out := make([]window, len(metas))
	for i, pm := range metas {
		if pm.EndNs == 0 {
			out[i].none = true
			continue
		}
		m := margin
		if m == 0 {
			m = 2 * pm.TelemetryIntervalNs
			if m == 0 {
				m = int64(time.Millisecond)
			}
		}
		out[i] = window{start: pm.StartNs, end: pm.EndNs + m, trafficEnd: pm.EndNs, hostEnd: math.MaxInt64}
		if pm.Executor != "" { // its samples are its own: no other point's leak in
			out[i].own = pm.Name
			continue
		}
		for _, o := range metas {
			if o.StartNs > pm.StartNs && o.StartNs <= out[i].end {
				out[i].end = max(o.StartNs-1, pm.EndNs)
			}
			if o.StartNs > pm.StartNs && o.StartNs <= out[i].hostEnd {
				out[i].hostEnd = max(o.StartNs-1, pm.EndNs)
			}
		}
	}
	return out
}

// tiersOf maps each switch of the lab to its tier (its role); nil lab:
// none, every switch is "unknown".
func tiersOf(lab *inventory.Lab) map[string]string {
	t := map[string]string{}
	if lab != nil {
		for _, s := range lab.Switches {
			t[s.Name] = cmp.Or(s.Role, "unknown")
		}
	}
	return t
}

// TierHost is the tier of RNIC (host) pause counters.
const TierHost = "host"

// kind is what a cumulative counter counts.
type kind uint8

const (
	kNone        kind = iota
	kPauseTx          // PFC pause frames sent
	kPauseRx          // PFC pause frames received
	kPauseUs          // time held paused by received pauses, us
	kDrops            // packets dropped by a switch port
	kECNPort          // packets ECN-marked by a port
	kECNQueue         // packets ECN-marked by a queue (a breakdown of the port's)
	kTxPktsPort       // packets sent by a port
	kTxPktsQueue      // packets sent by a queue
	kScheme           // a load-balancing module's counter (schemecounts.go)
	kPortScheme       // a load-balancing module's per-port counter (pathelephants.go)
	kRNIC             // any other rnic counter
)

// prio says whether f is one of the schema's per-priority fields of pattern.
func prio(pattern, f string) bool { _, ok := collectors.PrioOf(pattern, f); return ok }

// classify names the counters a report sums. Switch ports carry pfc<n>_tx,
// pfc<n>_rx and pfc<n>_rx_pause_duration_us (collectors' names for SAI's
// PFC_<n>_TX/RX_PKTS and _RX_PAUSE_DURATION_US); RNICs carry the mlx5
// hw_counters (rnic) and ethtool's tx_prio<n>_pause, rx_prio<n>_pause and
// rx_prio<n>_pause_duration (rnic_ethtool; microseconds per NVIDIA's
// counter documentation, UNCERTAIN).
func classify(meas, f string) kind {
	switch meas {
	case collectors.MeasPort:
		switch {
		case prio(collectors.FieldPFCTx, f):
			return kPauseTx
		case prio(collectors.FieldPFCRx, f):
			return kPauseRx
		case prio(collectors.FieldPFCPauseUs, f):
			return kPauseUs
		case f == collectors.FieldDrops:
			return kDrops
		case f == collectors.FieldECNMarked:
			return kECNPort
		case f == collectors.FieldTxPkts:
			return kTxPktsPort
		}
	case collectors.MeasQueue:
		switch f {
		case collectors.FieldECNMarked:
			return kECNQueue
		case collectors.FieldTxPkts:
			return kTxPktsQueue
		}
	case collectors.MeasEthtool:
		switch {
		case prio(collectors.FieldRNICPauseTx, f):
			return kPauseTx
		case prio(collectors.FieldRNICPauseRx, f):
			return kPauseRx
		case prio(collectors.FieldRNICPauseRxUs, f):
			return kPauseUs
		}
	case collectors.MeasRNIC:
		return kRNIC
	}
	return kNone
}

// ckey names one cumulative counter. For rnic, device is host/device.
type ckey struct {
	meas, device, port, queue, field string
	kind                             kind
	tier                             string
}

type sample struct {
	ts int64
	v  uint64
}

type qkey struct{ device, port, queue string }

// queueAcc gathers one queue's depth samples in a window.
type queueAcc struct {
	watermark uint64
	samples   []sample
}

// acc gathers one point's telemetry. Counters are cumulative, so a
// counter's increase in the window is its last sample in the window minus
// its last sample at or before the window's start (or, when there is none,
// its first sample in the window). Samples are compared by timestamp, so
// files may interleave devices in any order. Each counter's samples that
// matter live in one entry, found through its series (one map lookup per
// telemetry point, not per field: the report of a 1,024-host run reads
// tens of millions of fields).
type acc struct {
	counters map[ckey]*counterAcc // every entry, for the point's figures
	series   map[skey][]fieldAcc  // the same entries by series, then field
	queues   map[qkey]*queueAcc
}

// skey names one series of counters: a ckey without its field and kind.
type skey struct{ meas, device, port, queue, tier string }

// fieldAcc is one field's entry in its series.
type fieldAcc struct {
	field string
	kind  kind
	c     *counterAcc
}

// counterAcc is one counter's samples that matter, each with whether it
// was seen: the last at or before the window's start, the first and last
// in the window, and, for RNIC counters, the first after the traffic
// ended (the runner's read after the point). pause holds a pause-frame
// counter's samples in the window, for the time series.
type counterAcc struct {
	before, first, last, after sample
	has                        uint8 // hasBefore | hasFirst | hasLast | hasAfter
	pause                      []sample
}

const (
	hasBefore uint8 = 1 << iota
	hasFirst
	hasLast
	hasAfter
)

func newAcc() *acc {
	return &acc{counters: map[ckey]*counterAcc{}, series: map[skey][]fieldAcc{}, queues: map[qkey]*queueAcc{}}
}

// samples records the counters ks (one telemetry point's: one series)
// sampled at ts, with the point's fields (a field without an unsigned
// value is no sample).
func (a *acc) samples(w window, ks []ckey, ts int64, fields map[string]any) {
	if len(ks) == 0 {
		return
	}
	host := ks[0].tier == TierHost && ts >= w.trafficEnd && ts <= w.hostEnd
	in := w.has(ts)
	if !host && !in && ts > w.start {
		return // samples that matter to nothing: no entries for them
	}
	sk := skey{ks[0].meas, ks[0].device, ks[0].port, ks[0].queue, ks[0].tier}
	series := a.series[sk]
	for _, k := range ks {
		v, ok := collectors.Uint(fields[k.field])
		if !ok {
			continue
		}
		var c *counterAcc
		for _, f := range series {
			if f.field == k.field && f.kind == k.kind {
				c = f.c
				break
			}
		}
		if c == nil {
			c = &counterAcc{}
			a.counters[k] = c
			series = append(series, fieldAcc{k.field, k.kind, c})
			a.series[sk] = series
		}
		c.sample(k.kind, host, in, ts <= w.start, sample{ts, v})
	}
}

// sample records s in c: host says s is an RNIC counter's after the
// traffic, in that it lies in the window, before that it is at or before
// the window's start.
func (c *counterAcc) sample(kind kind, host, in, before bool, s sample) {
	if host && (c.has&hasAfter == 0 || s.ts < c.after.ts) {
		c.after, c.has = s, c.has|hasAfter
	}
	if before && (c.has&hasBefore == 0 || s.ts >= c.before.ts) {
		c.before, c.has = s, c.has|hasBefore
	}
	if !in {
		return
	}
	if c.has&hasFirst == 0 || s.ts < c.first.ts {
		c.first, c.has = s, c.has|hasFirst
	}
	if c.has&hasLast == 0 || s.ts >= c.last.ts {
		c.last, c.has = s, c.has|hasLast
	}
	if kind == kPauseTx {
		c.pause = append(c.pause, s)
	}
}

// counters appends to out the cumulative counters of one telemetry point
// (out is reused from point to point: millions of them in a large run).
func counters(p collectors.Point, tiers map[string]string, out []ckey) []ckey {
	base := ckey{meas: p.Measurement, device: p.Tags[collectors.TagDevice], port: p.Tags[collectors.TagPort], queue: p.Tags[collectors.TagQueue]}
	if p.Measurement == collectors.LBMeasurement {
		return schemeKeys(p, ckey{meas: p.Measurement, device: base.device, tier: cmp.Or(tiers[base.device], "unknown")}, out)
	}
	if host, ok := p.Tags[collectors.TagHost]; ok {
		base.device, base.tier = host+"/"+p.Tags[collectors.TagDevice], TierHost
	} else {
		base.tier = cmp.Or(tiers[base.device], "unknown")
	}
	for f := range p.Fields {
		if k := classify(p.Measurement, f); k != kNone {
			c := base
			c.field, c.kind = f, k
			out = append(out, c)
		}
	}
	return out
}

// gapIn says whether a collector_gap point concerns the window: its
// since_ns..until_ns span overlaps it, or, lacking those, its timestamp
// lies in it.
func gapIn(p collectors.Point, w window) bool {
	if since, until, ok := collectors.Span(p); ok && until >= since {
		return since <= w.end && until >= w.start
	}
	return w.has(p.Time.UnixNano())
}

// telemetryStats makes one pass over the run's telemetry and fills the
// telemetry fields of each point summary (same order as wins; labs[i] is
// the lab point i ran on, which names its switches' tiers; watch[i], when
// set, follows point i's long flows and fabric ports).
func telemetryStats(src TelemetrySource, wins []window, ps []PointSummary, labs []*inventory.Lab, watch []*seriesWatch, seriesPoints int) error {
	accs := make([]*acc, len(wins))
	for i := range accs {
		accs[i] = newAcc()
	}
	// Counter keys depend on the tiers, so on the lab: one tier map and
	// one set of keys per distinct lab, made once per telemetry point.
	labIdx := make([]int, len(wins))
	var tiers []map[string]string
	seen := map[*inventory.Lab]int{}
	for i, l := range labs {
		j, ok := seen[l]
		if !ok {
			j = len(tiers)
			seen[l] = j
			tiers = append(tiers, tiersOf(l))
		}
		labIdx[i] = j
	}
	keys := make([][]ckey, len(tiers)) // this point's, per lab
	made := make([]bool, len(tiers))
	err := src(func(p collectors.Point) error {
		// An idle sample (an emulated lab's twin between points) is no
		// traffic's: a point's figures, baselines included, come from the
		// samples of its own simulated traffic.
		if p.Idle() {
			return nil
		}
		ts := p.Time.UnixNano()
		clear(made)
		for i, w := range wins {
			if w.none || w.own != p.Tags[collectors.TagPoint] {
				continue
			}
			a := accs[i]
			j := labIdx[i]
			if !made[j] {
				keys[j], made[j] = counters(p, tiers[j], keys[j][:0]), true
			}
			ks := keys[j]
			if w.has(ts) {
				ps[i].TelemetryPoints++
			}
			if p.Measurement == collectors.MeasGap && gapIn(p, w) {
				ps[i].Gaps++
			}
			a.samples(w, ks, ts, p.Fields)
			if p.Measurement == collectors.MeasQueue && w.has(ts) {
				a.queue(p, ts)
			}
			if p.Measurement == collectors.MeasPort && watch != nil && watch[i] != nil {
				watch[i].sample(p, ts, w)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, a := range accs {
		if !wins[i].none {
			a.finish(&ps[i], wins[i], seriesPoints)
			if watch != nil && watch[i] != nil {
				watch[i].finishFlows(&ps[i], wins[i], seriesPoints)
				watch[i].finishPaths(&ps[i], wins[i], seriesPoints)
			}
		}
	}
	return nil
}

func (a *acc) queue(p collectors.Point, ts int64) {
	depth, okD := collectors.Uint(p.Fields[collectors.FieldDepthBytes])
	wm, okW := collectors.Uint(p.Fields[collectors.FieldWatermark])
	if !okD && !okW {
		return
	}
	k := qkey{p.Tags[collectors.TagDevice], p.Tags[collectors.TagPort], p.Tags[collectors.TagQueue]}
	q, ok := a.queues[k]
	if !ok {
		q = &queueAcc{}
		a.queues[k] = q
	}
	if okD {
		q.samples = append(q.samples, sample{ts, depth})
	}
	if okW {
		q.watermark = max(q.watermark, wm)
	}
}

// delta is a counter's increase in the window; false after a reset
// (device restart), when the increase is unknown. Counters seen neither
// in the window nor, for RNIC counters, after it have none.
func (c *counterAcc) delta(k ckey) (uint64, bool) {
	if c.has&(hasLast|hasAfter) == 0 {
		return 0, false
	}
	l := c.last
	if c.has&hasAfter != 0 {
		l = c.after
	}
	base := c.before
	if c.has&hasBefore == 0 && k.kind != kPortScheme { // a port's scheme counter absent before started at 0 (pathelephants.go)
		base = c.first
	}
	if l.v < base.v {
		return 0, false
	}
	return l.v - base.v, true
}

func (a *acc) finish(ps *PointSummary, w window, seriesPoints int) {
	var sums [kRNIC + 1]uint64
	var seen [kRNIC + 1]bool
	tierPFC := map[string]*TierPFC{}
	tier := func(name string) *TierPFC {
		t, ok := tierPFC[name]
		if !ok {
			t = &TierPFC{Tier: name}
			tierPFC[name] = t
		}
		return t
	}
	for k, c := range a.counters {
		d, ok := c.delta(k)
		if !ok {
			continue
		}
		sums[k.kind] += d
		seen[k.kind] = true
		switch k.kind {
		case kPauseTx:
			tier(k.tier).Tx += d
		case kPauseRx:
			tier(k.tier).Rx += d
		case kPauseUs:
			t := tier(k.tier)
			t.PauseUs = ptr(deref(t.PauseUs) + d)
		case kRNIC:
			if ps.RNIC == nil {
				ps.RNIC = map[string]uint64{}
			}
			ps.RNIC[k.field] += d
		case kScheme:
			addScheme(ps, k, d)
		case kPortScheme:
			addLinkElephants(ps, k, d)
		}
	}
	ps.Drops = sums[kDrops]
	// Switch pause counters only: host pause frames are in the host tier.
	for _, t := range tierPFC {
		if t.Tier != TierHost {
			ps.PFCPauseFrames += t.Tx
			ps.PFCPauseRx += t.Rx
		}
	}
	// Queue ECN counts are a breakdown of the port's; use the port total
	// when the device reports one, so no mark is counted twice. The same
	// for packets sent.
	ps.ECNMarked = sums[kECNQueue]
	if seen[kECNPort] {
		ps.ECNMarked = sums[kECNPort]
	}
	tx, txSeen := sums[kTxPktsQueue], seen[kTxPktsQueue]
	if seen[kTxPktsPort] {
		tx, txSeen = sums[kTxPktsPort], true
	}
	if txSeen && tx > 0 {
		ps.ECNMarkRate = ptr(float64(ps.ECNMarked) / float64(tx))
	}
	secs := float64(ps.RateSpanNs) / 1e9
	if secs > 0 {
		ps.ECNMarksPerSec = float64(ps.ECNMarked) / secs
		ps.PFCPauseTxPerS = float64(ps.PFCPauseFrames) / secs
	}
	if v, ok := ps.RNIC[collectors.FieldOutOfSequence]; ok {
		ps.OutOfOrder = ptr(v)
	}
	for _, t := range tierPFC {
		if secs > 0 {
			t.TxPerS = float64(t.Tx) / secs
		}
		ps.PFCByTier = append(ps.PFCByTier, *t)
	}
	sort.Slice(ps.PFCByTier, func(i, j int) bool { return tierLess(ps.PFCByTier[i].Tier, ps.PFCByTier[j].Tier) })
	a.finishQueues(ps, w, seriesPoints)
	ps.PFCSeries = a.pauseSeries(w, seriesPoints)
}

// tierLess orders tiers from the hosts up: host, leaf, agg, spine, then
// any other by name.
func tierLess(a, b string) bool {
	rank := func(t string) int {
		if i := slices.Index([]string{TierHost, "leaf", "agg", "spine"}, t); i >= 0 {
			return i
		}
		return 4
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
