package capacity

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/labctl/labctl/reports"
)

var sloSyntax = regexp.MustCompile(`^\s*([a-z0-9_.]+)\s*(?:\[([^\]]*)\])?\s*(<=|>=)\s*([-+0-9.eE]+)\s*$`)

// ParseSLO reads an SLO written as METRIC[BUCKET]<=LIMIT or
// METRIC>=LIMIT, e.g. "slowdown.p99[<100KB]<=10", "fct.p99<=2e6" (ns),
// "goodput_gbps>=90". Metric names are those of reports.Metrics.
func ParseSLO(s string) (SLO, error) {
	m := sloSyntax.FindStringSubmatch(s)
	if m == nil {
		return SLO{}, fmt.Errorf("SLO %q: want METRIC[BUCKET]<=LIMIT or METRIC>=LIMIT, e.g. slowdown.p99[<100KB]<=10", s)
	}
	v, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return SLO{}, fmt.Errorf("SLO %q: limit %q is not a number", s, m[4])
	}
	return SLO{Metric: m[1], Bucket: strings.TrimSpace(m[2]), Op: m[3], Limit: v}, nil
}

// metric is the SLO's metric and bucket as written: "slowdown.p99[<100KB]".
func (s SLO) metric() string {
	if s.Bucket == "" {
		return s.Metric
	}
	return s.Metric + "[" + s.Bucket + "]"
}

// Value is the SLO metric of a run: over every group and repetition that
// has it, the worst value (the highest for <=, the lowest for >=), since
// the SLO must hold for each of them. It is an error when no group has
// the metric (e.g. no flow fell in the bucket).
func Value(ms []reports.Metric, slo SLO) (float64, error) {
	found := false
	var worst float64
	for _, m := range ms {
		if m.Name != slo.Metric || m.Bucket != slo.Bucket {
			continue
		}
		for _, v := range m.Values {
			if !found || (slo.Op == ">=" && v < worst) || (slo.Op != ">=" && v > worst) {
				worst, found = v, true
			}
		}
	}
	if !found {
		return math.NaN(), fmt.Errorf("the run has no %s (no completed flows of that kind?)", slo.metric())
	}
	return worst, nil
}
