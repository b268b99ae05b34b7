package regress

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
)

// metrics builds a run's metrics from points, the way Metrics groups
// them: scheme x load, one repetition each.
func metrics(scheme string, fct map[float64]float64) []reports.Metric {
	var ps []reports.PointSummary
	for load, v := range fct {
		ps = append(ps, reports.PointSummary{Name: "ws", Scheme: scheme, Status: reports.StatusOK, Flows: 1,
			Params: map[string]any{reports.ParamScheme: scheme, reports.ParamLoad: load, reports.ParamWorkload: "websearch"},
			FCT:    reports.FCTSummary{Count: 1, Mean: v, P99: int64(v)}, GoodputGbps: 90})
	}
	return reports.Metrics(&reports.Summary{Points: ps})
}

// An ecmp baseline against a drill candidate: the groups differ by key,
// each run has one scheme per condition, so they are compared by
// condition, the verdict says which schemes, and a worse scheme fails
// naming the metric.
func TestCompareAcrossSchemesByCondition(t *testing.T) {
	rules := &Thresholds{Rules: []Rule{{Metric: "fct.mean", Relative: f(0.1)}, {Metric: "goodput_gbps", Relative: f(0.05)}}}
	base := metrics("ecmp", map[float64]float64{0.3: 100, 0.5: 200})
	cand := metrics("drill", map[float64]float64{0.3: 105, 0.5: 300})
	v := Compare(base, cand, rules)
	if len(v.Paired) != 2 || len(v.New) != 0 || len(v.Missing) != 0 || len(v.Checks) != 4 {
		t.Fatalf("verdict %+v", v)
	}
	if p := v.Paired[0]; p.BaselineScheme != "ecmp" || p.CandidateScheme != "drill" ||
		p.String() != "load=0.3 workload=websearch: baseline scheme ecmp vs candidate scheme drill" {
		t.Errorf("pairing %+v: %s", p, p)
	}
	regs := v.Regressions()
	if len(regs) != 1 || regs[0].Metric != "fct.mean" || regs[0].Group != "scheme=ecmp load=0.5 workload=websearch" ||
		regs[0].CandidateGroup == "" || !strings.Contains(regs[0].Message(), "REGRESSED") {
		t.Errorf("regressions %+v", regs)
	}
	// The same scheme on both sides matches by key, with no pairing.
	if v := Compare(base, base, rules); !v.Passed() || len(v.Paired) != 0 || len(v.Checks) != 4 {
		t.Errorf("self: %+v", v)
	}
}

// Where a run has two schemes at a condition, which one to compare with
// is not clear: nothing is paired; the baseline's groups are missing,
// one check each (five metrics the rules cover), and the candidate's are new.
func TestCompareDoesNotGuessAmongSchemes(t *testing.T) {
	rules := &Thresholds{Rules: []Rule{{Metric: "fct.*", Relative: f(0.1)}, {Metric: "goodput_gbps", Relative: f(0.05)}}}
	base := append(metrics("ecmp", map[float64]float64{0.3: 100}), metrics("letflow", map[float64]float64{0.3: 100})...)
	cand := metrics("drill", map[float64]float64{0.3: 100})
	v := Compare(base, cand, rules)
	if len(v.Paired) != 0 || len(v.Missing) != 2 || len(v.New) != 1 || len(v.Checks) != 2 || v.Passed() {
		t.Fatalf("verdict %+v", v)
	}
	for _, c := range v.Checks {
		if !c.Missing || c.Metric != GroupMissing || c.BaseN != 5 ||
			c.Message() != "the candidate has no such group (its points failed or did not run): 5 metrics not compared" {
			t.Errorf("missing group check %+v: %s", c, c.Message())
		}
	}
}
