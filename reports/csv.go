package reports

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// WriteCSV writes one row per point and size bucket ("all" first) with
// every metric; point-wide metrics repeat on each of the point's rows.
// Params become param_<name> columns and PFC tiers pfc_pause_tx_per_s_<tier>
// columns, and scheme counters (emulated lab) lb_<name> columns (the
// hosts' modules' lb_<name>_hosts). A metric the archive cannot give (n/a),
// or a counter a point's scheme does not count, is an empty cell.
// Every *_ns column is a whole number of nanoseconds (the FCT mean rounded
// to the nanosecond, the resolution of the flow records); the output is
// the same bytes for the same summary.
func WriteCSV(w io.Writer, s *Summary) error {
	var params, tiers []string
	seenP, seenT := map[string]bool{}, map[string]bool{}
	for _, p := range s.Points {
		for k := range p.Params {
			if !seenP[k] {
				seenP[k] = true
				params = append(params, k)
			}
		}
		for _, t := range p.PFCByTier {
			if !seenT[t.Tier] {
				seenT[t.Tier] = true
				tiers = append(tiers, t.Tier)
			}
		}
	}
	sort.Strings(params)
	sort.Slice(tiers, func(i, j int) bool { return tierLess(tiers[i], tiers[j]) })
	head := []string{"run", "point", "pattern", "scheme", "workload", "load", "requested_load", "achieved_load", "status", "error"}
	for _, k := range params {
		head = append(head, "param_"+k)
	}
	head = append(head, "bucket", "flows", "failed_flows", "fct_mean_ns", "fct_min_ns", "fct_p50_ns", "fct_p95_ns", "fct_p99_ns", "fct_p999_ns", "fct_max_ns",
		"slowdown_flows", "slowdown_mean", "slowdown_p50", "slowdown_p95", "slowdown_p99", "slowdown_p999", "slowdown_max",
		"goodput_gbps", "duration_ns", "rate_span_ns", "pfc_pause_tx", "pfc_pause_rx", "pfc_pause_tx_per_s")
	for _, t := range tiers {
		head = append(head, "pfc_pause_tx_per_s_"+t)
	}
	head = append(head, "ecn_marked", "ecn_mark_rate", "ecn_marks_per_s", "drops", "peak_queue_bytes", "mean_queue_bytes", "peak_watermark_bytes",
		"out_of_order_packets", "telemetry_points", "telemetry_gaps")
	lbCols := schemeColumns(s)
	for _, c := range lbCols {
		head = append(head, "lb_"+schemeMetric(c))
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(head) // errors surface through Flush/Error
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	// Floats in plain decimal, never with an exponent (1.2e+06), so a
	// spreadsheet or a diff sees the same digits summary.json holds.
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return f(v)
	}
	optI := func(v int64, ok bool) string {
		if !ok {
			return ""
		}
		return i(v)
	}
	for pi := range s.Points {
		p := &s.Points[pi]
		lead := []string{cmp.Or(p.Run, s.RunID), p.Name, p.Pattern, p.Scheme, p.Workload, opt(p.Load, p.Load != 0), opt(p.RequestedLoad, p.RequestedLoad != 0),
			opt(p.AchievedLoad, p.AchievedLoad != 0), p.Status, p.Error}
		for _, k := range params {
			v, ok := p.Params[k]
			lead = append(lead, opt(0, false))
			if ok {
				lead[len(lead)-1] = fmt.Sprint(v)
			}
		}
		u := func(v uint64) string { return strconv.FormatUint(v, 10) }
		perS := p.RateSpanNs > 0
		tail := []string{f(p.GoodputGbps), i(p.DurationNs), i(p.RateSpanNs), u(p.PFCPauseFrames), u(p.PFCPauseRx), opt(p.PFCPauseTxPerS, perS)}
		for _, t := range tiers {
			v := 0.0
			for _, x := range p.PFCByTier {
				if x.Tier == t {
					v = x.TxPerS
				}
			}
			tail = append(tail, opt(v, perS))
		}
		tail = append(tail, u(p.ECNMarked), opt(deref(p.ECNMarkRate), p.ECNMarkRate != nil), opt(p.ECNMarksPerSec, perS),
			u(p.Drops), u(p.PeakQueueBytes), f(p.MeanQueueBytes), u(p.PeakWatermarkBytes),
			opt(float64(deref(p.OutOfOrder)), p.OutOfOrder != nil), strconv.Itoa(p.TelemetryPoints), strconv.Itoa(p.Gaps))
		for _, c := range lbCols {
			n, ok := p.schemeCount(c)
			tail = append(tail, optI(int64(n), ok))
		}
		if p.NoTraffic { // no telemetry window: every fabric cell is n/a
			for k := 3; k < len(tail); k++ {
				tail[k] = ""
			}
		}
		rows := append([]BucketSummary{{Bucket: "all", Flows: p.Flows, FCT: p.FCT, Slowdown: p.Slowdown}}, p.BySize...)
		for k, b := range rows {
			failed := ""
			if k == 0 {
				failed = strconv.Itoa(p.Failed)
			}
			fc, sl := b.FCT, b.Slowdown
			has, hasS := fc.Count > 0, sl.Count > 0
			mid := []string{b.Bucket, strconv.Itoa(b.Flows), failed,
				optI(int64(math.Round(fc.Mean)), has), optI(fc.Min, has), optI(fc.P50, has), optI(fc.P95, has), optI(fc.P99, has),
				optI(fc.P999, has), optI(fc.Max, has),
				strconv.Itoa(sl.Count), opt(sl.Mean, hasS), opt(sl.P50, hasS), opt(sl.P95, hasS), opt(sl.P99, hasS), opt(sl.P999, hasS), opt(sl.Max, hasS)}
			_ = cw.Write(append(append(append([]string{}, lead...), mid...), tail...))
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report csv: %w", err)
	}
	return nil
}
