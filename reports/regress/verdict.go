package regress

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/labctl/labctl/reports"
)

func key(m reports.Metric) string { return m.Group + "\x00" + m.Name + "\x00" + m.Bucket }

// DefaultBetter says which way a metric improves when no rule says:
// throughputs and bandwidths are better higher, everything else
// (completion times, slowdowns, pauses, drops, queues) lower.
func DefaultBetter(metric string) string {
	for _, w := range []string{"goodput", "throughput", "busbw", "algbw", "bandwidth", "load_met"} {
		if strings.Contains(metric, w) {
			return "higher"
		}
	}
	return "lower"
}

// Check is one metric compared.
type Check struct {
	Group     string  `json:"group"`
	Metric    string  `json:"metric"`
	Bucket    string  `json:"bucket,omitempty"`
	Unit      string  `json:"unit,omitempty"`
	Better    string  `json:"better"`
	Baseline  float64 `json:"baseline"` // mean over repetitions
	Candidate float64 `json:"candidate"`
	BaseN     int     `json:"baseline_n"`
	CandN     int     `json:"candidate_n"`
	// Worse is how much worse the candidate is, in the metric's unit
	// (negative: better); Allowed is the threshold plus Noise.
	Worse     float64 `json:"worse"`
	Allowed   float64 `json:"allowed"`
	Noise     float64 `json:"noise"`
	Regressed bool    `json:"regressed"`
	// Missing: the baseline has this metric and the candidate does not
	// (its point failed or did not run). Counts as a regression.
	Missing bool `json:"missing,omitempty"`
}

// Name is the check's short name: metric and bucket.
func (c Check) Name() string {
	if c.Bucket == "" {
		return c.Metric
	}
	return c.Metric + " [" + c.Bucket + "]"
}

// Message says what happened, e.g. "fct.p99 [<100KB]: 120.3 -> 151 ns
// (+25.5 %, allowed +12.1)".
func (c Check) Message() string {
	if c.Missing {
		return fmt.Sprintf("%s: baseline %s, candidate has no value (point failed or missing)", c.Name(), num(c.Baseline, c.Unit))
	}
	rel := ""
	if c.Baseline != 0 {
		rel = fmt.Sprintf("%+.1f %%, ", 100*(c.Candidate-c.Baseline)/math.Abs(c.Baseline))
	}
	verdict := "ok"
	if c.Regressed {
		verdict = "REGRESSED"
	}
	return fmt.Sprintf("%s: %s -> %s (%s%s better; worse by %s, allowed %s incl. noise %s): %s",
		c.Name(), num(c.Baseline, c.Unit), num(c.Candidate, c.Unit), rel, c.Better,
		num(c.Worse, c.Unit), num(c.Allowed, c.Unit), num(c.Noise, c.Unit), verdict)
}

// num prints a value in its unit, scaled for reading: ns as us/ms/s,
// bytes as KB/MB (decimal), anything else with four significant digits.
func num(v float64, unit string) string {
	scales := map[string][]struct {
		div  float64
		unit string
	}{
		"ns": {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}},
		"B":  {{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}},
	}
	for _, s := range scales[unit] {
		if math.Abs(v) >= s.div {
			return fmt.Sprintf("%.4g %s", v/s.div, s.unit)
		}
	}
	out := fmt.Sprintf("%.4g", v)
	if unit != "" {
		out += " " + unit
	}
	return out
}

// Verdict is the outcome of a comparison.
type Verdict struct {
	Checks []Check `json:"checks"`
	// New lists groups the candidate has and the baseline does not; they
	// are not compared.
	New []string `json:"new_groups,omitempty"`
}

// Regressions are the checks that failed.
func (v Verdict) Regressions() []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Regressed {
			out = append(out, c)
		}
	}
	return out
}

// Passed is true when nothing regressed.
func (v Verdict) Passed() bool { return len(v.Regressions()) == 0 }

// Compare checks every baseline metric a rule covers against the
// candidate's metric of the same group, name and bucket.
func Compare(baseline, candidate []reports.Metric, t *Thresholds) Verdict {
	cand := map[string]reports.Metric{}
	candGroups := map[string]bool{}
	for _, s := range candidate {
		cand[key(s)] = s
		candGroups[s.Group] = true
	}
	baseGroups := map[string]bool{}
	var v Verdict
	for _, b := range baseline {
		baseGroups[b.Group] = true
		r, ok := t.rule(b.Name, b.Bucket)
		if !ok || len(b.Values) == 0 {
			continue
		}
		better := r.Better
		if better == "" {
			better = DefaultBetter(b.Name)
		}
		bm, bsd := meanSD(b.Values)
		c := Check{Group: b.Group, Metric: b.Name, Bucket: b.Bucket, Unit: b.Unit, Better: better,
			Baseline: bm, BaseN: len(b.Values)}
		s, ok := cand[key(b)]
		if !ok || len(s.Values) == 0 {
			c.Missing, c.Regressed = true, true
			v.Checks = append(v.Checks, c)
			continue
		}
		cm, csd := meanSD(s.Values)
		c.Candidate, c.CandN = cm, len(s.Values)
		c.Worse = cm - bm
		if better == "higher" {
			c.Worse = bm - cm
		}
		var allowed float64
		if r.Relative != nil {
			allowed = *r.Relative * math.Abs(bm)
		}
		if r.Absolute != nil {
			allowed = math.Max(allowed, *r.Absolute)
		}
		// Standard error of the difference of two means; a run without
		// repetitions contributes no spread.
		c.Noise = t.sigma() * math.Sqrt(bsd*bsd/float64(c.BaseN)+csd*csd/float64(c.CandN))
		c.Allowed = allowed + c.Noise
		c.Regressed = c.Worse > c.Allowed
		v.Checks = append(v.Checks, c)
	}
	for g := range candGroups {
		if !baseGroups[g] {
			v.New = append(v.New, g)
		}
	}
	sort.Strings(v.New)
	sort.SliceStable(v.Checks, func(i, j int) bool {
		a, b := v.Checks[i], v.Checks[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		return a.Bucket < b.Bucket
	})
	return v
}

// meanSD is the mean and the sample standard deviation (0 for one value).
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}
