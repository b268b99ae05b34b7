package reports

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/labctl/labctl/archive"
)

// Metric is one metric of one group of comparable points (the same
// parameters; repetitions differ only by seed), with one value per
// repetition that produced it. Regression verdicts and capacity searches
// read runs through Metrics.
type Metric struct {
	Group string // GroupKeys' key, e.g. "scheme=ecmp load=0.5 workload=websearch"
	// Condition is GroupKeys' condition (the key without the scheme) and
	// Scheme the group's scheme: regress pairs a baseline group with a
	// candidate group of another scheme by them.
	Condition string
	Scheme    string
	Name      string    // e.g. "fct.p99"
	Bucket    string    // "" for all flows, else a size bucket label or a switch tier
	Unit      string    // "ns", "Gb/s", "B", "/s" or "" (a count or ratio)
	Values    []float64 // one per repetition
}

// The metrics of a run, per group of points (Metric.Group is GroupKeys'
// key) and, for FCT and slowdown, per size bucket
// ("" for all flows, else the bucket label, e.g. "<100KB"):
//
//	fct.mean fct.p50 fct.p99 fct.p999        ns
//	slowdown.mean slowdown.p50 slowdown.p99 slowdown.p999
//	goodput_gbps                            Gb/s (higher is better)
//	busbw_gbps                              all-reduce bus bandwidth (higher is better)
//	failed_flows drops ecn_marks_per_s
//	pfc_pause_tx_per_s                      bucket "" all switches, else a tier (leaf, spine ...)
//	peak_queue_bytes mean_queue_bytes
//	out_of_order_packets                    only when the run has RNIC counters
//	lb.<counter>, lb.<counter>_hosts        scheme counters (emulated lab), per point's scheme
//
// A failed point contributes nothing: its group lacks the value.

// Metrics lists a summary's metrics: one per group, metric and bucket,
// with one value per repetition.
func Metrics(s *Summary) []Metric {
	idx := map[string]int{}
	var out []Metric
	var cond, scheme string // of the point being added
	add := func(group, metric, bucket, unit string, v float64) {
		k := group + "\x00" + metric + "\x00" + bucket
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Metric{Group: group, Condition: cond, Scheme: scheme, Name: metric, Bucket: bucket, Unit: unit})
		}
		out[i].Values = append(out[i].Values, v)
	}
	for _, p := range s.Points {
		if p.Status == StatusFailed {
			continue
		}
		var g string
		g, cond = GroupKeys(p)
		scheme = p.Scheme
		fct := func(bucket string, f FCTSummary, sd SlowdownSummary) {
			if f.Count > 0 {
				add(g, "fct.mean", bucket, "ns", f.Mean)
				add(g, "fct.p50", bucket, "ns", float64(f.P50))
				add(g, "fct.p99", bucket, "ns", float64(f.P99))
				add(g, "fct.p999", bucket, "ns", float64(f.P999))
			}
			if sd.Count > 0 {
				add(g, "slowdown.mean", bucket, "", sd.Mean)
				add(g, "slowdown.p50", bucket, "", sd.P50)
				add(g, "slowdown.p99", bucket, "", sd.P99)
				add(g, "slowdown.p999", bucket, "", sd.P999)
			}
		}
		fct("", p.FCT, p.Slowdown)
		for _, b := range p.BySize {
			fct(b.Bucket, b.FCT, b.Slowdown)
		}
		add(g, "goodput_gbps", "", "Gb/s", p.GoodputGbps)
		if ar := p.AllReduce; ar != nil && ar.Complete {
			add(g, "busbw_gbps", "", "Gb/s", ar.BusBWGbps)
		}
		add(g, "failed_flows", "", "", float64(p.Failed))
		if p.NoTraffic {
			continue // no fabric numbers: n/a, not 0
		}
		add(g, "drops", "", "", float64(p.Drops))
		add(g, "ecn_marks_per_s", "", "/s", p.ECNMarksPerSec)
		if p.RateSpanNs > 0 {
			add(g, "pfc_pause_tx_per_s", "", "/s", p.PFCPauseTxPerS)
			for _, t := range p.PFCByTier {
				add(g, "pfc_pause_tx_per_s", t.Tier, "/s", t.TxPerS)
			}
		}
		add(g, "peak_queue_bytes", "", "B", float64(p.PeakQueueBytes))
		add(g, "mean_queue_bytes", "", "B", p.MeanQueueBytes)
		if p.OutOfOrder != nil {
			add(g, "out_of_order_packets", "", "", float64(*p.OutOfOrder))
		}
		for _, c := range p.SchemeCounts {
			add(g, "lb."+schemeMetric(c), "", "", float64(c.Value))
		}
	}
	return out
}

// ReadSummary reads summary.json from a run archive (or a copy of one).
func ReadSummary(dir string) (*Summary, error) {
	p := archive.Open(dir).Summary()
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%w (a run that did not reach its report has no summary)", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &s, nil
}
