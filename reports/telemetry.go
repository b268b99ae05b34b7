package reports

import (
	"sort"
	"strings"
	"time"

	"github.com/labctl/labctl/collectors"
)

// window is the span of telemetry that belongs to a point.
type window struct{ start, end int64 }

func (w window) has(ts int64) bool { return ts >= w.start && ts <= w.end }

// windows are the points' [start, end+margin] spans; the margin never
// reaches into the next point, whose counters would otherwise leak in.
func windows(metas []PointMeta, margin int64) []window {
	out := make([]window, len(metas))
	for i, pm := range metas {
		m := margin
		if m == 0 {
			m = 2 * pm.TelemetryIntervalNs
			if m == 0 {
				m = int64(time.Millisecond)
			}
		}
		out[i] = window{pm.StartNs, pm.EndNs + m}
		for _, o := range metas {
			if o.StartNs > pm.StartNs && o.StartNs <= out[i].end {
				out[i].end = max(o.StartNs-1, pm.EndNs)
			}
		}
	}
	return out
}

// ckey names one cumulative counter.
type ckey struct{ meas, device, port, queue, field string }

type sample struct {
	ts int64
	v  uint64
}

// acc gathers one point's telemetry. Counters are cumulative, so a
// counter's increase in the window is its last sample in the window minus
// its last sample at or before the window's start (or, when there is none,
// its first sample in the window). Samples are compared by timestamp, so
// files may interleave devices in any order.
type acc struct {
	before, first, last map[ckey]sample
	peaks               map[[2]string]*PortPeak
}

func newAcc() *acc {
	return &acc{before: map[ckey]sample{}, first: map[ckey]sample{}, last: map[ckey]sample{}, peaks: map[[2]string]*PortPeak{}}
}

func (a *acc) counter(w window, k ckey, s sample) {
	if s.ts <= w.start {
		if b, ok := a.before[k]; !ok || s.ts >= b.ts {
			a.before[k] = s
		}
	}
	if !w.has(s.ts) {
		return
	}
	if f, ok := a.first[k]; !ok || s.ts < f.ts {
		a.first[k] = s
	}
	if l, ok := a.last[k]; !ok || s.ts >= l.ts {
		a.last[k] = s
	}
}

// pfcField says whether a port field is a PFC pause counter (pfc<n>_tx or
// pfc<n>_rx) and which direction.
func pfcField(f string) (tx, ok bool) {
	rest, found := strings.CutPrefix(f, "pfc")
	if !found {
		return false, false
	}
	prio, dir, found := strings.Cut(rest, "_")
	if !found || prio == "" || strings.Trim(prio, "0123456789") != "" {
		return false, false
	}
	return dir == "tx", dir == "tx" || dir == "rx"
}

// counters picks the cumulative counters a report sums from one point.
func counters(p collectors.Point) []ckey {
	var out []ckey
	base := ckey{meas: p.Measurement, device: p.Tags["device"], port: p.Tags["port"], queue: p.Tags["queue"]}
	for f := range p.Fields {
		_, pfc := pfcField(f)
		if (p.Measurement == "port" && (pfc || f == "drops")) || ((p.Measurement == "port" || p.Measurement == "queue") && f == "ecn_marked") {
			k := base
			k.field = f
			out = append(out, k)
		}
	}
	return out
}

// gapIn says whether a collector_gap point concerns the window: its
// since_ns..until_ns span overlaps it, or, lacking those, its timestamp
// lies in it.
func gapIn(p collectors.Point, w window) bool {
	since, ok1 := collectors.Uint(p.Fields["since_ns"])
	until, ok2 := collectors.Uint(p.Fields["until_ns"])
	if ok1 && ok2 && until >= since {
		return int64(since) <= w.end && int64(until) >= w.start
	}
	return w.has(p.Time.UnixNano())
}

// telemetryStats makes one pass over the run's telemetry and fills the
// telemetry fields of each point summary (same order as wins).
func telemetryStats(src TelemetrySource, wins []window, ps []PointSummary) error {
	accs := make([]*acc, len(wins))
	for i := range accs {
		accs[i] = newAcc()
	}
	err := src(func(p collectors.Point) error {
		ts := p.Time.UnixNano()
		keys := counters(p)
		for i, w := range wins {
			a := accs[i]
			if w.has(ts) {
				ps[i].TelemetryPoints++
			}
			if p.Measurement == "collector_gap" && gapIn(p, w) {
				ps[i].Gaps++
			}
			for _, k := range keys {
				if v, ok := collectors.Uint(p.Fields[k.field]); ok {
					a.counter(w, k, sample{ts, v})
				}
			}
			if p.Measurement == "queue" && w.has(ts) {
				a.queue(p)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, a := range accs {
		a.finish(&ps[i])
	}
	return nil
}

func (a *acc) queue(p collectors.Point) {
	depth, okD := collectors.Uint(p.Fields["depth_bytes"])
	wm, okW := collectors.Uint(p.Fields["watermark"])
	if !okD && !okW {
		return
	}
	k := [2]string{p.Tags["device"], p.Tags["port"]}
	pp, ok := a.peaks[k]
	if !ok {
		pp = &PortPeak{Device: k[0], Port: k[1], Queue: p.Tags["queue"]}
		a.peaks[k] = pp
	}
	if okD && depth > pp.Bytes {
		pp.Bytes, pp.Queue = depth, p.Tags["queue"]
	}
	if okW {
		pp.Watermark = max(pp.Watermark, wm)
	}
}

func (a *acc) finish(ps *PointSummary) {
	var ecnPort, ecnQueue uint64
	portECN := false
	for k, l := range a.last {
		base, ok := a.before[k]
		if !ok {
			base = a.first[k]
		}
		if l.v < base.v {
			continue // counter reset (device restart): the increase is unknown
		}
		d := l.v - base.v
		if k.field == "drops" {
			ps.Drops += d
			continue
		}
		if k.field == "ecn_marked" {
			if k.meas == "port" {
				ecnPort += d
				portECN = true
			} else {
				ecnQueue += d
			}
			continue
		}
		if tx, _ := pfcField(k.field); tx {
			ps.PFCPauseFrames += d
		} else {
			ps.PFCPauseRx += d
		}
	}
	// Queue ECN counts are a breakdown of the port's; use the port total
	// when the device reports one, so no mark is counted twice.
	ps.ECNMarked = ecnQueue
	if portECN {
		ps.ECNMarked = ecnPort
	}
	for _, pp := range a.peaks {
		ps.PeakQueues = append(ps.PeakQueues, *pp)
		ps.PeakQueueBytes = max(ps.PeakQueueBytes, pp.Bytes)
		ps.PeakWatermarkBytes = max(ps.PeakWatermarkBytes, pp.Watermark)
	}
	sort.Slice(ps.PeakQueues, func(i, j int) bool {
		x, y := ps.PeakQueues[i], ps.PeakQueues[j]
		if x.Bytes != y.Bytes {
			return x.Bytes > y.Bytes
		}
		if x.Device != y.Device {
			return x.Device < y.Device
		}
		return x.Port < y.Port
	})
}
