package papers

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
)

// sumOf is a summary with one point per scheme at load 0.8, whose mean
// FCT (us) and goodput are given.
func sumOf(fctUs map[string]float64) *reports.Summary {
	sum := &reports.Summary{}
	for s, us := range fctUs {
		sum.Points = append(sum.Points, reports.PointSummary{Name: "w/scheme=" + s, Scheme: s, Status: reports.StatusOK,
			Params: map[string]any{"scheme": s, "load": 0.8}, FCT: reports.FCTSummary{Count: 1, Mean: us * 1000}, GoodputGbps: 100 / us})
	}
	return sum
}

func TestEvaluateDecidesEachKindBothWays(t *testing.T) {
	t.Parallel()
	sum := sumOf(map[string]float64{"ecmp": 100, "conga": 80, "conweave": 60, "gemma": 50})
	w := map[string]string{"load": "0.8"}
	q := Query{Metric: "avg_fct", Where: w}
	for _, c := range []struct {
		name        string
		claim       Claim
		twin, agree string
	}{
		{"lower as the paper", Claim{Query: q, A: []string{"gemma"}, B: "ecmp", Expect: "lower"},
			"-50.0 % (50.0 us against 100.0 us)", Agree},
		{"as the paper, larger", Claim{Query: q, Paper: "-6 %", A: []string{"gemma"}, B: "ecmp", Expect: "lower"}, "-50.0 %", Agree + " (larger)"},
		{"as the paper, smaller", Claim{Query: q, Paper: "-90.5 %", A: []string{"gemma"}, B: "ecmp", Expect: "lower"}, "-50.0 %", Agree + " (smaller)"},
		{"as the paper, about as large", Claim{Query: q, Paper: "-57 %", A: []string{"gemma"}, B: "ecmp", Expect: "lower"}, "-50.0 %", Agree},
		{"higher where the paper says lower", Claim{Query: q, A: []string{"ecmp"}, B: "gemma", Expect: "lower"},
			"+100.0 % (100.0 us against 50.0 us)", Disagree},
		{"higher as the paper", Claim{Query: q, A: []string{"ecmp"}, B: "gemma", Expect: "higher"}, "+100.0 %", Agree},
		{"several A, one wrong", Claim{Query: q, A: []string{"gemma", "ecmp"}, B: "conga", Expect: "lower"},
			"gemma: -37.5 %", Disagree + " (1 of 2 as the paper)"},
		{"order as the paper", Claim{Query: q, Order: []string{"ecmp", "conga", "conweave", "gemma"}},
			"ecmp (100.0 us) > conga (80.0 us) > conweave (60.0 us) > gemma (50.0 us)", Agree},
		{"order with one pair swapped", Claim{Query: q, Order: []string{"conga", "ecmp", "conweave", "gemma"}},
			"ecmp (100.0 us) > conga", Disagree + " (5 of 6 pairs as the paper)"},
		{"level group not compared within", Claim{Query: q, Order: []string{"conga~ecmp", "gemma"}}, "", Agree},
		{"best", Claim{Query: q, Order: []string{"ecmp", "conga", "gemma"}, Best: "gemma"}, "", Agree},
		{"best that is not", Claim{Query: q, Order: []string{"ecmp", "conga", "gemma"}, Best: "conga"}, "", Disagree + " (1 of 2 as the paper)"},
		{"higher is better for goodput", Claim{Query: Query{Metric: "goodput", Where: w}, Order: []string{"ecmp", "gemma"}}, "ecmp (1.0 Gb/s) > gemma (2.0 Gb/s)", Agree},
		{"a point the run lacks", Claim{Query: q, A: []string{"drill"}, B: "ecmp", Expect: "lower"}, "", NA + ": no completed point with load=0.8, scheme=drill"},
		{"a condition the run lacks", Claim{Query: Query{Metric: "avg_fct", Where: map[string]string{"load": "0.4"}}, A: []string{"gemma"}, B: "ecmp", Expect: "lower"}, "", NA + ": no completed point"},
	} {
		c.claim.By = "scheme"
		if err := c.claim.check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := Evaluate(c.claim, sum)
		exact := c.agree == Agree && !strings.Contains(c.name, "level") && !strings.Contains(c.name, "best")
		if !strings.Contains(r.Twin, c.twin) || !strings.HasPrefix(r.Agree, c.agree) || exact && r.Agree != c.agree {
			t.Errorf("%s: twin %q agree %q; want twin with %q, agree %q", c.name, r.Twin, r.Agree, c.twin, c.agree)
		}
	}
	if r := Evaluate(Claim{Query: q, A: []string{"gemma"}, B: "ecmp", Expect: "lower", By: "scheme"}, nil); r.Agree != NA+": not run" {
		t.Errorf("no summary: %q", r.Agree)
	}
}

// Two points matching one claim (a condition the claim leaves open) make
// it n/a, not a guess.
func TestAmbiguousSelectorIsNA(t *testing.T) {
	t.Parallel()
	sum := sumOf(map[string]float64{"ecmp": 100, "gemma": 50})
	sum.Points = append(sum.Points, reports.PointSummary{Name: "w/load=0.4", Scheme: "ecmp", Status: reports.StatusOK,
		Params: map[string]any{"scheme": "ecmp", "load": 0.4}, FCT: reports.FCTSummary{Count: 1, Mean: 1}})
	c := Claim{Query: Query{Metric: "avg_fct"}, A: []string{"gemma"}, B: "ecmp", Expect: "lower", By: "scheme"}
	if r := Evaluate(c, sum); !strings.Contains(r.Agree, "2 points with scheme=ecmp") {
		t.Errorf("got %q", r.Agree)
	}
	c.Where = map[string]string{"load": "0.8"}
	if r := Evaluate(c, sum); r.Agree != Agree {
		t.Errorf("with where: got %q", r.Agree)
	}
}
