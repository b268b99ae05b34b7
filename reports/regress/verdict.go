package regress

import (
	"fmt"
	"math"
	"slices"
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
	Group string `json:"group"`
	// CandidateGroup is the candidate's group compared with Group when it
	// is another one: the same condition under another scheme.
	CandidateGroup string  `json:"candidate_group,omitempty"`
	Metric         string  `json:"metric"`
	Bucket         string  `json:"bucket,omitempty"`
	Unit           string  `json:"unit,omitempty"`
	Better         string  `json:"better"`
	Baseline       float64 `json:"baseline"` // mean over repetitions
	Candidate      float64 `json:"candidate"`
	BaseN          int     `json:"baseline_n"`
	CandN          int     `json:"candidate_n"`
	// Worse is how much worse the candidate is, in the metric's unit
	// (negative: better); Allowed is the threshold plus Noise.
	Worse     float64 `json:"worse"`
	Allowed   float64 `json:"allowed"`
	Noise     float64 `json:"noise"`
	Regressed bool    `json:"regressed"`
	// Missing: the baseline has this metric and the candidate does not.
	// For a group the candidate lacks altogether (its points failed or
	// did not run) there is one check, Metric GroupMissing. Counts as a
	// regression.
	Missing bool `json:"missing,omitempty"`
}

// GroupMissing is the Metric of the one check that stands for a whole
// baseline group the candidate does not have.
const GroupMissing = "group"

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
	switch {
	case c.Missing && c.Metric == GroupMissing:
		return fmt.Sprintf("the candidate has no such group (its points failed or did not run): %d metrics not compared", c.BaseN)
	case c.Missing:
		return fmt.Sprintf("%s: baseline %s, candidate has no value%s", c.Name(), num(c.Baseline, c.Unit), slowdownNote(c.Metric))
	}
	rel := ""
	if c.Baseline != 0 {
		rel = fmt.Sprintf("%+.1f %%, ", 100*(c.Candidate-c.Baseline)/math.Abs(c.Baseline))
	}
	verdict := "ok"
	if c.Regressed {
		verdict = "REGRESSED"
	}
	return fmt.Sprintf("%s: %s -> %s (%s%s better; worse by %s, allowed %s incl. noise %s): %s%s",
		c.Name(), num(c.Baseline, c.Unit), num(c.Candidate, c.Unit), rel, c.Better,
		num(c.Worse, c.Unit), num(c.Allowed, c.Unit), num(c.Noise, c.Unit), verdict, slowdownNote(c.Metric))
}

// slowdownNote states the slowdown convention beside every slowdown a
// verdict prints (text, table and JUnit all print Message): the numbers
// only compare with others of the same convention.
func slowdownNote(metric string) string {
	if !strings.HasPrefix(metric, "slowdown") {
		return ""
	}
	return " (slowdown: " + reports.SlowdownIdeal + ")"
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

// Pairing is a baseline group compared with a candidate group of another
// scheme: the groups did not match by key, and at their condition each
// run has exactly one scheme (e.g. an ecmp baseline, a drill candidate).
type Pairing struct {
	Condition       string `json:"condition"`
	BaselineGroup   string `json:"baseline_group"`
	CandidateGroup  string `json:"candidate_group"`
	BaselineScheme  string `json:"baseline_scheme"`
	CandidateScheme string `json:"candidate_scheme"`
}

// String says which schemes were compared.
func (p Pairing) String() string {
	cond := p.Condition
	if cond == "" {
		cond = "the run"
	}
	return fmt.Sprintf("%s: baseline scheme %s vs candidate scheme %s", cond, orNone(p.BaselineScheme), orNone(p.CandidateScheme))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Verdict is the outcome of a comparison.
type Verdict struct {
	Checks []Check `json:"checks"`
	// Paired lists the groups compared by condition across schemes.
	Paired []Pairing `json:"paired_by_condition,omitempty"`
	// Missing lists the baseline groups the candidate lacks (each has one
	// GroupMissing check).
	Missing []string `json:"missing_groups,omitempty"`
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

// groupInfo is what pairing needs of a group.
type groupInfo struct{ cond, scheme string }

// groupsOf indexes metrics' groups, and counts the groups at each
// condition (one group per condition: one scheme there).
func groupsOf(ms []reports.Metric) (map[string]groupInfo, map[string]int) {
	gs, perCond := map[string]groupInfo{}, map[string]int{}
	for _, m := range ms {
		if _, ok := gs[m.Group]; !ok {
			gs[m.Group] = groupInfo{m.Condition, m.Scheme}
			perCond[m.Condition]++
		}
	}
	return gs, perCond
}

// pair maps each baseline group to the candidate group it is compared
// with: the same key, else the candidate's only group at the same
// condition when the baseline too has only one group (one scheme) there.
func pair(baseline, candidate []reports.Metric) (map[string]string, []Pairing) {
	bg, bn := groupsOf(baseline)
	cg, cn := groupsOf(candidate)
	byCond := map[string]string{} // condition -> the candidate's only group there
	for g, info := range cg {
		if cn[info.cond] == 1 {
			byCond[info.cond] = g
		}
	}
	to := map[string]string{}
	var paired []Pairing
	for g, info := range bg {
		if _, ok := cg[g]; ok {
			to[g] = g
			continue
		}
		c, ok := byCond[info.cond]
		if !ok || bn[info.cond] != 1 {
			continue
		}
		to[g] = c
		paired = append(paired, Pairing{Condition: info.cond, BaselineGroup: g, CandidateGroup: c,
			BaselineScheme: info.scheme, CandidateScheme: cg[c].scheme})
	}
	sort.Slice(paired, func(i, j int) bool { return paired[i].BaselineGroup < paired[j].BaselineGroup })
	return to, paired
}

// Compare checks every baseline metric a rule covers against the
// candidate's metric of the same name and bucket in the same group, or,
// when the candidate ran another scheme, in its group of the same
// condition (see pair).
func Compare(baseline, candidate []reports.Metric, t *Thresholds) Verdict {
	cand := map[string]reports.Metric{}
	for _, s := range candidate {
		cand[key(s)] = s
	}
	to, paired := pair(baseline, candidate)
	v := Verdict{Paired: paired}
	missing := map[string]int{} // baseline group -> metrics it could not compare
	for _, b := range baseline {
		r, ok := t.rule(b.Name, b.Bucket)
		if !ok || len(b.Values) == 0 {
			continue
		}
		cg, ok := to[b.Group]
		if !ok {
			missing[b.Group]++
			continue
		}
		better := r.Better
		if better == "" {
			better = DefaultBetter(b.Name)
		}
		bs := reports.SpreadOf(b.Values)
		c := Check{Group: b.Group, Metric: b.Name, Bucket: b.Bucket, Unit: b.Unit, Better: better, Baseline: bs.Mean, BaseN: bs.N}
		if cg != b.Group {
			c.CandidateGroup = cg
		}
		m := b
		m.Group = cg
		s, ok := cand[key(m)]
		if !ok || len(s.Values) == 0 {
			c.Missing, c.Regressed = true, true
			v.Checks = append(v.Checks, c)
			continue
		}
		cs := reports.SpreadOf(s.Values)
		c.Candidate, c.CandN = cs.Mean, cs.N
		c.Worse = cs.Mean - bs.Mean
		if better == "higher" {
			c.Worse = bs.Mean - cs.Mean
		}
		var allowed float64
		if r.Relative != nil {
			allowed = *r.Relative * math.Abs(bs.Mean)
		}
		if r.Absolute != nil {
			allowed = math.Max(allowed, *r.Absolute)
		}
		c.Noise = reports.Noise(t.sigma(), bs, cs)
		c.Allowed = allowed + c.Noise
		c.Regressed = c.Worse > c.Allowed
		v.Checks = append(v.Checks, c)
	}
	for g, n := range missing {
		v.Missing = append(v.Missing, g)
		v.Checks = append(v.Checks, Check{Group: g, Metric: GroupMissing, Better: "", BaseN: n, Missing: true, Regressed: true})
	}
	sort.Strings(v.Missing)
	compared := map[string]bool{}
	for _, c := range to {
		compared[c] = true
	}
	for _, s := range candidate {
		if !compared[s.Group] && !slices.Contains(v.New, s.Group) {
			v.New = append(v.New, s.Group)
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
