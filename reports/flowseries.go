package reports

import (
	"fmt"
	"sort"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
)

// Per-flow throughput over time, for a point's long flows, from the
// switch port counters the run's telemetry already holds: no per-flow
// counter exists in an RNIC or switch that a collector could read, so a
// flow's rate is read at a port that carries it alone. That is its
// receiver's access port (the leaf port facing the receiver, bytes sent:
// what was delivered) when no other flow of the point goes to that
// receiver, else its sender's (bytes received from the sender: what it
// put into the fabric) when the sender sends nothing else; a flow that
// shares both ends has no series. Rates are of bytes on the wire (headers
// included). docs/reports.md, "Long flows".

const (
	// longFlowBytes is the size from which a flow is long: 1 MB, above
	// the papers' short-flow and burst sizes (64 KB bursts, <100KB bins).
	longFlowBytes = 1_000_000
	// maxLongFlows bounds the long flows followed per point: the largest.
	maxLongFlows = 8
	// VictimShare: a long flow is a victim of a burst when its rate during
	// the burst window falls below this share of its rate before it.
	VictimShare = 0.5
)

// FlowRate is one long flow's throughput: where it was measured and its
// mean rate per period (before, during and after the point's burst
// window; else the quarters of the flow's life).
type FlowRate struct {
	FlowID  int    `json:"flow_id"`
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Bytes   int64  `json:"bytes"`
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	// Port is where the rate was read, e.g. "leaf1:1/3 tx (to h19)";
	// empty when no port carries the flow alone (no rates then).
	Port    string       `json:"port,omitempty"`
	Periods []PeriodRate `json:"periods,omitempty"`
	// Victim is set only with a burst window and both rates known.
	Victim *bool `json:"victim,omitempty"`
}

// PeriodRate is a flow's mean rate over [FromNs, ToNs]; null when
// samples cover less than half of it.
type PeriodRate struct {
	Name   string   `json:"name"`
	FromNs int64    `json:"from_ns"`
	ToNs   int64    `json:"to_ns"`
	Gbps   *float64 `json:"gbps"`
}

// Span is a time span in unix ns.
type Span struct {
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// flowPick gathers, in the flows pass, what the series need: the largest
// flows, how many flows each host sends and receives, and the burst
// window (a burst point's flows of step 1 and on; step 0 is background).
type flowPick struct {
	long         []FlowRow
	sends, recvs map[string]int
	burst        *Span
}

func (fp *flowPick) add(pattern string, r FlowRow) {
	if fp.sends == nil {
		fp.sends, fp.recvs = map[string]int{}, map[string]int{}
	}
	fp.sends[r.Src]++
	fp.recvs[r.Dst]++
	if pattern == "burst" && r.Step > 0 {
		if fp.burst == nil {
			fp.burst = &Span{r.StartNs, r.EndNs}
		}
		fp.burst.StartNs, fp.burst.EndNs = min(fp.burst.StartNs, r.StartNs), max(fp.burst.EndNs, r.EndNs)
	}
	if r.Size < longFlowBytes {
		return
	}
	// larger first, ties by flow id: the order of plots and tables must
	// not follow the order flows completed in
	i := sort.Search(len(fp.long), func(i int) bool {
		l := fp.long[i]
		return l.Size < r.Size || (l.Size == r.Size && l.FlowID > r.FlowID)
	})
	if i == maxLongFlows {
		return
	}
	fp.long = append(fp.long, FlowRow{})
	copy(fp.long[i+1:], fp.long[i:])
	fp.long[i] = r
	if len(fp.long) > maxLongFlows {
		fp.long = fp.long[:maxLongFlows]
	}
}

// pkey names a port counter the series follow.
type pkey struct{ device, port, field string }

// accessPort is the switch end of a host's first link.
func accessPort(lab *inventory.Lab, host string) (inventory.LinkEnd, bool) {
	for _, l := range lab.Links {
		switch host {
		case l.A.Device:
			return l.B, true
		case l.B.Device:
			return l.A, true
		}
	}
	return inventory.LinkEnd{}, false
}

// flowPort is the counter that carries flow r alone, and its label.
func (fp *flowPick) flowPort(lab *inventory.Lab, r FlowRow) (pkey, string, bool) {
	if lab == nil {
		return pkey{}, "", false
	}
	if e, ok := accessPort(lab, r.Dst); ok && fp.recvs[r.Dst] == 1 {
		return pkey{e.Device, e.Port, collectors.FieldTxBytes}, fmt.Sprintf("%s tx (to %s)", e, r.Dst), true
	}
	if e, ok := accessPort(lab, r.Src); ok && fp.sends[r.Src] == 1 {
		return pkey{e.Device, e.Port, collectors.FieldRxBytes}, fmt.Sprintf("%s rx (from %s)", e, r.Src), true
	}
	return pkey{}, "", false
}

// flowName labels a flow in plots and tables.
func flowName(f FlowRate) string { return fmt.Sprintf("flow %d %s→%s", f.FlowID, f.Src, f.Dst) }

// finishFlows sets the point's long flows, their periods and series
// from the watched counters.
func (sw *seriesWatch) finishFlows(ps *PointSummary, w window, seriesPoints int) {
	ps.BurstWindow = sw.pick.burst
	for _, r := range sw.pick.long {
		f := FlowRate{FlowID: r.FlowID, Src: r.Src, Dst: r.Dst, Bytes: r.Size, StartNs: r.StartNs, EndNs: r.EndNs}
		k, label, ok := sw.pick.flowPort(sw.lab, r)
		s := sw.samples[k]
		if ok && len(s) > 1 {
			sortSamples(s)
			f.Port = label
			f.Periods = periods(s, f.StartNs, f.EndNs, sw.pick.burst)
			f.Victim = victim(f.Periods)
			b := binsFor(w, sw.interval, seriesPoints)
			rateBins(s, b)
			ps.FlowSeries = append(ps.FlowSeries, b.series(flowName(f)+" (Gb/s)"))
		}
		ps.LongFlows = append(ps.LongFlows, f)
	}
}

// Period names.
const (
	PeriodBefore = "before"
	PeriodDuring = "during"
	PeriodAfter  = "after"
)

// periods are a flow's mean rates before, during and after the burst
// window (those within its life), or, without a burst, over each quarter
// of its life.
func periods(s []sample, start, end int64, burst *Span) []PeriodRate {
	var out []PeriodRate
	add := func(name string, from, to int64) {
		if to <= from {
			return
		}
		p := PeriodRate{Name: name, FromNs: from, ToNs: to}
		if g, ok := meanGbps(s, from, to); ok {
			p.Gbps = &g
		}
		out = append(out, p)
	}
	if burst == nil {
		q := (end - start) / 4
		for i := range int64(4) {
			add(fmt.Sprintf("q%d", i+1), start+i*q, start+(i+1)*q)
		}
		return out
	}
	add(PeriodBefore, start, min(burst.StartNs, end))
	add(PeriodDuring, max(start, burst.StartNs), min(burst.EndNs, end))
	add(PeriodAfter, max(start, burst.EndNs), end)
	return out
}

// victim says whether a flow's rate during the burst fell below
// VictimShare of its rate before it; nil when either is unknown or the
// flow was not running both before and during the burst.
func victim(ps []PeriodRate) *bool {
	var before, during *float64
	for _, p := range ps {
		switch p.Name {
		case PeriodBefore:
			before = p.Gbps
		case PeriodDuring:
			during = p.Gbps
		}
	}
	if before == nil || during == nil || *before <= 0 {
		return nil
	}
	v := *during < VictimShare**before
	return &v
}
