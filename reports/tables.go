package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// table is a rendered table: Markdown and HTML print the same cells, with
// the note (if any) under the title.
type table struct {
	Title  string
	Note   string
	Header []string
	Rows   [][]string
}

// SlowdownNote goes with every printed slowdown (reports, capacity
// answers): its definition (inventory.IdealFCT, docs/reports.md).
const SlowdownNote = "Slowdown = FCT ÷ ideal FCT; " + SlowdownIdeal +
	" (the flow alone on an idle network, from its first byte to the ACK of its last packet)."

// SlowdownIdeal is the convention in a few words, for where a slowdown is
// printed in a line of its own (regress verdicts).
const SlowdownIdeal = "the ideal FCT includes the base round trip"

const na = "n/a"

func us(ns int64) string    { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
func usf(ns float64) string { return fmt.Sprintf("%.1f", ns/1e3) }
func kib(b uint64) string   { return fmt.Sprintf("%.1f", float64(b)/1024) }
func kibf(b float64) string { return fmt.Sprintf("%.1f", b/1024) }
func mib(b int64) string    { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
func gbps(v float64) string { return fmt.Sprintf("%.2f", v) }
func f2(v float64) string   { return fmt.Sprintf("%.2f", v) }
func itoa(v int) string     { return strconv.Itoa(v) }
func utoa(v uint64) string  { return strconv.FormatUint(v, 10) }

// optional prints a value that may be missing as n/a.
func optional[T any](p *T, f func(T) string) string {
	if p == nil {
		return na
	}
	return f(*p)
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }

// rate prints a per-second rate with three significant digits and an SI
// prefix: 173464.45 as "173k", 3743264.9 as "3.74M", 68.78 as "68.8".
func rate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// slowdown cells are n/a without ideal FCTs (no lab snapshot).
func sd(s SlowdownSummary, v float64) string {
	if s.Count == 0 {
		return na
	}
	return f2(v)
}

func loads(p PointSummary) string {
	if p.RequestedLoad == 0 && p.AchievedLoad == 0 {
		if p.Load != 0 {
			return loadStr(p.Load)
		}
		return "-"
	}
	a := "-"
	if p.AchievedLoad > 0 {
		a = f3(p.AchievedLoad)
	}
	return loadStr(p.RequestedLoad) + " / " + a
}

func pointName(p PointSummary) string {
	if p.Run != "" {
		return p.Run + "/" + p.Name
	}
	return p.Name
}

func status(p PointSummary) string {
	if p.Error != "" {
		return p.Status + ": " + p.Error
	}
	return p.Status
}

// spread prints a mean over repetitions with its range when there are
// several.
func spread(s Spread, f func(float64) string) string {
	switch s.N {
	case 0:
		return na
	case 1:
		return f(s.Mean)
	}
	return fmt.Sprintf("%s [%s–%s]", f(s.Mean), f(s.Min), f(s.Max))
}

// topQueues is how many queues per point the queue table lists.
const topQueues = 5

func tables(s *Summary) []table {
	over := table{Title: "Points: flows", Note: SlowdownNote, Header: []string{"Point", "Scheme", "Status", "Load (req / achieved)", "Flows", "Failed",
		"FCT mean (µs)", "p50", "p99", "p99.9", "max", "Slowdown mean", "p99", "Goodput (Gb/s)"}}
	fab := table{Title: "Points: fabric", Header: []string{"Point", "PFC pause tx", "PFC pause rx",
		"PFC pause tx/s", "ECN marked", "ECN mark rate", "ECN marks/s", "Drops", "Peak queue (KiB)", "Mean queue (KiB)", "Out-of-order pkts",
		"Telemetry points", "Gaps"}}
	size := table{Title: "FCT (µs) and slowdown by flow size", Note: SlowdownNote, Header: []string{"Point", "Size", "Flows", "FCT mean", "p50", "p99", "p99.9", "max",
		"Slowdown mean", "p50", "p99", "p99.9"}}
	tier := table{Title: "PFC by switch tier", Header: []string{"Point", "Tier", "Pause tx", "Pause rx", "Pause tx/s", "Paused (µs)"}}
	peaks := table{Title: fmt.Sprintf("Queue depth per switch queue (top %d per point)", topQueues),
		Header: []string{"Point", "Device", "Port", "Queue", "Peak (KiB)", "Mean (KiB)", "Watermark (KiB)"}}
	ar := table{Title: "All-reduce", Header: []string{"Point", "Hosts", "Buffer (MiB)", "Steps", "Total (µs)", "Slowest step (µs)", "algbw (Gb/s)", "busbw (Gb/s)"}}
	steps := table{Title: "All-reduce steps", Header: []string{"Point", "Step", "Start (µs after first)", "Duration (µs)"}}
	for _, p := range s.Points {
		f, sl, name := p.FCT, p.Slowdown, pointName(p)
		pauseRate, ecnRate := na, na
		if p.RateSpanNs > 0 {
			pauseRate, ecnRate = rate(p.PFCPauseTxPerS), rate(p.ECNMarksPerSec)
		}
		row := []string{name, cmpDash(p.Scheme), status(p), loads(p), itoa(p.Flows), itoa(p.Failed),
			usf(f.Mean), us(f.P50), us(f.P99), us(f.P999), us(f.Max), sd(sl, sl.Mean), sd(sl, sl.P99), gbps(p.GoodputGbps)}
		if f.Count == 0 { // no completed flow: nothing to measure, not 0
			for i := 6; i < len(row); i++ {
				row[i] = na
			}
		}
		over.Rows = append(over.Rows, row)
		frow := []string{name, utoa(p.PFCPauseFrames), utoa(p.PFCPauseRx), pauseRate, utoa(p.ECNMarked),
			optional(p.ECNMarkRate, pct), ecnRate, utoa(p.Drops), kib(p.PeakQueueBytes), kibf(p.MeanQueueBytes),
			optional(p.OutOfOrder, utoa), itoa(p.TelemetryPoints), itoa(p.Gaps)}
		if p.NoTraffic { // no window: nothing was measured, not 0
			for i := 1; i < len(frow); i++ {
				frow[i] = na
			}
		}
		fab.Rows = append(fab.Rows, frow)
		for _, b := range p.BySize {
			x := b.Slowdown
			size.Rows = append(size.Rows, []string{name, b.Bucket, itoa(b.Flows), usf(b.FCT.Mean), us(b.FCT.P50), us(b.FCT.P99),
				us(b.FCT.P999), us(b.FCT.Max), sd(x, x.Mean), sd(x, x.P50), sd(x, x.P99), sd(x, x.P999)})
		}
		for _, t := range p.PFCByTier {
			tier.Rows = append(tier.Rows, []string{name, t.Tier, utoa(t.Tx), utoa(t.Rx), rate(t.TxPerS), optional(t.PauseUs, utoa)})
		}
		for i, q := range p.PeakQueues {
			if i == topQueues || (q.Bytes == 0 && q.Watermark == 0) {
				break
			}
			peaks.Rows = append(peaks.Rows, []string{name, q.Device, q.Port, q.Queue, kib(q.Bytes), kibf(q.MeanBytes), kib(q.Watermark)})
		}
		a := p.AllReduce
		if a == nil {
			continue
		}
		var slow int64
		for _, st := range a.Steps {
			slow = max(slow, st.DurationNs)
			steps.Rows = append(steps.Rows, []string{name, itoa(st.Step), us(st.StartNs - p.StartNs), us(st.DurationNs)})
		}
		alg, bus := gbps(a.AlgBWGbps), gbps(a.BusBWGbps)
		if !a.Complete {
			alg, bus = "incomplete", "incomplete"
		}
		ar.Rows = append(ar.Rows, []string{name, itoa(a.Hosts), mib(a.BufferBytes), itoa(len(a.Steps)), us(a.TotalNs), us(slow), alg, bus})
	}
	out := []table{over, fab, size}
	for _, t := range append([]table{tier, peaks, ar, steps, schemeTable(s)}, pathElephantsTables(s)...) {
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	out = append(out, seriesTables(s)...)
	out = append(out, goodputTables(s)...)
	return append(out, acrossTables(s)...)
}

func cmpDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// acrossTables are the groups (when some point repeats or sweeps a
// parameter) and the comparisons.
func acrossTables(s *Summary) []table {
	grouped := false
	for _, g := range s.Groups {
		grouped = grouped || len(g.Points) > 1 || g.Params != nil
	}
	var out []table
	if grouped {
		g := table{Title: "Groups (mean over repetitions [min–max])", Note: SlowdownNote, Header: []string{"Group", "Points ok", "Failed points", "Achieved load",
			"FCT mean (µs)", "FCT p99 (µs)", "FCT p99.9 (µs)", "FCT max (µs)", "Slowdown mean", "Slowdown p99", "Goodput (Gb/s)", "PFC pause tx/s", "Out-of-order pkts"}}
		for _, x := range s.Groups {
			row := []string{x.Key, itoa(x.OK), itoa(x.FailedPoints), spread(x.AchievedLoad, f3), na, na, na, na, na, na, spread(x.GoodputGbps, gbps),
				spread(x.PFCPausePerS, rate), spread(x.OutOfOrder, f0)}
			if len(x.BySize) > 0 && x.BySize[0].Bucket == "all" {
				b := x.BySize[0]
				copy(row[4:], []string{spread(b.FCTMean, usf), spread(b.FCTP99, usf), spread(b.FCTP999, usf), spread(b.FCTMax, usf),
					spread(b.SlowdownMean, f2), spread(b.SlowdownP99, f2)})
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	if len(s.Comparisons) > 0 {
		c := table{Title: "Comparisons (reduction = (baseline - scheme) / baseline)", Header: []string{"Condition", "Scheme", "Baseline", "Metric", "Size",
			"Scheme value", "Baseline value", "Reduction", "Ratio", "n (scheme vs baseline)", "Within noise"}}
		for _, x := range s.Comparisons {
			v := f2
			if x.Metric == "avg FCT" || x.Metric == "p99 FCT" {
				v = func(ns float64) string { return usf(ns) + " µs" }
			}
			if strings.Contains(x.Metric, "slowdown") {
				c.Note = SlowdownNote
			}
			c.Rows = append(c.Rows, []string{x.Condition, x.Scheme, x.Baseline, x.Metric, x.Bucket, v(x.Value), v(x.BaselineValue),
				fmt.Sprintf("%.1f%%", x.ReductionPct), f2(x.Ratio), fmt.Sprintf("%d vs %d", x.N, x.BaselineN), yesNo(x.WithinNoise)})
		}
		out = append(out, c)
	}
	return out
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// headlines are the comparison sentences against the baseline over all
// flows, the papers' headline form.
func headlines(s *Summary) []string {
	var out []string
	for _, c := range s.Comparisons {
		if c.Baseline == s.Baseline && c.Bucket == "all" {
			out = append(out, c.Sentence)
		}
	}
	return out
}
