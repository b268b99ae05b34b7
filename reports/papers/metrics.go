package papers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/labctl/labctl/reports"
)

// metric is one number a claim may read from a point's summary.
type metric struct {
	unit         string // unitTime (ns), unitRatio, unitCount, unitGbps
	higherBetter bool
	byBucket     bool // may be read for one size bucket
	get          func(p *reports.PointSummary, fct reports.FCTSummary, sd reports.SlowdownSummary) (float64, bool)
}

const (
	unitTime  = "time"
	unitRatio = "ratio"
	unitCount = "count"
	unitGbps  = "Gb/s"
)

func fctMetric(f func(reports.FCTSummary) float64) metric {
	return metric{unit: unitTime, byBucket: true, get: func(_ *reports.PointSummary, s reports.FCTSummary, _ reports.SlowdownSummary) (float64, bool) {
		return f(s), s.Count > 0
	}}
}

func slowdownMetric(f func(reports.SlowdownSummary) float64) metric {
	return metric{unit: unitRatio, byBucket: true, get: func(_ *reports.PointSummary, _ reports.FCTSummary, s reports.SlowdownSummary) (float64, bool) {
		return f(s), s.Count > 0
	}}
}

func pointMetric(unit string, f func(p *reports.PointSummary) (float64, bool)) metric {
	return metric{unit: unit, get: func(p *reports.PointSummary, _ reports.FCTSummary, _ reports.SlowdownSummary) (float64, bool) {
		return f(p)
	}}
}

// metrics are the metrics claims and tables may name; docs/reports.md
// defines each summary field they read.
var metrics = map[string]metric{
	"avg_fct":      fctMetric(func(s reports.FCTSummary) float64 { return s.Mean }),
	"p50_fct":      fctMetric(func(s reports.FCTSummary) float64 { return float64(s.P50) }),
	"p99_fct":      fctMetric(func(s reports.FCTSummary) float64 { return float64(s.P99) }),
	"max_fct":      fctMetric(func(s reports.FCTSummary) float64 { return float64(s.Max) }),
	"min_fct":      fctMetric(func(s reports.FCTSummary) float64 { return float64(s.Min) }),
	"avg_slowdown": slowdownMetric(func(s reports.SlowdownSummary) float64 { return s.Mean }),
	"p50_slowdown": slowdownMetric(func(s reports.SlowdownSummary) float64 { return s.P50 }),
	"p99_slowdown": slowdownMetric(func(s reports.SlowdownSummary) float64 { return s.P99 }),
	"max_slowdown": slowdownMetric(func(s reports.SlowdownSummary) float64 { return s.Max }),
	"ooo": pointMetric(unitCount, func(p *reports.PointSummary) (float64, bool) {
		if p.OutOfOrder == nil {
			return 0, false
		}
		return float64(*p.OutOfOrder), true
	}),
	"pause_tx": pointMetric(unitCount, func(p *reports.PointSummary) (float64, bool) {
		return float64(p.PFCPauseFrames), !p.NoTraffic
	}),
	"goodput": {unit: unitGbps, higherBetter: true, get: func(p *reports.PointSummary, _ reports.FCTSummary, _ reports.SlowdownSummary) (float64, bool) {
		return p.GoodputGbps, !p.NoTraffic
	}},
}

// MetricNames lists the metrics a claims file may name.
func MetricNames() []string { return slices.Sorted(maps.Keys(metrics)) }

// read is metric m of point p, of the flows in bucket ("" all).
func (m metric) read(p *reports.PointSummary, bucket string) (float64, error) {
	fct, sd := p.FCT, p.Slowdown
	if bucket != "" {
		i := slices.IndexFunc(p.BySize, func(b reports.BucketSummary) bool { return b.Bucket == bucket })
		if i < 0 {
			var have []string
			for _, b := range p.BySize {
				have = append(have, b.Bucket)
			}
			return 0, fmt.Errorf("point %s has no size bucket %q (it has %v)", p.Name, bucket, have)
		}
		fct, sd = p.BySize[i].FCT, p.BySize[i].Slowdown
	}
	v, ok := m.get(p, fct, sd)
	if !ok {
		return 0, fmt.Errorf("point %s: no data for it", p.Name)
	}
	return v, nil
}

// format writes a value of the metric's unit the way the report does.
func (m metric) format(v float64) string {
	switch m.unit {
	case unitTime:
		if v >= 1e6 {
			return strconv.FormatFloat(v/1e6, 'f', 2, 64) + " ms"
		}
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " us"
	case unitRatio:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case unitCount:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + m.unit
	}
}

// worse says whether a is worse than b under the metric.
func (m metric) worse(a, b float64) bool {
	if m.higherBetter {
		return a < b
	}
	return a > b
}
