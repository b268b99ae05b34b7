package papers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// synthSummary is a summary of s's planned points (names and parameters
// exactly as a run records them, through JSON as summary.json holds
// them), every metric set to a distinct non-zero value.
func synthSummary(t *testing.T, s *scenarios.Scenario) *reports.Summary {
	t.Helper()
	plan, _, err := (&scenarios.Runner{}).PlanPoints(s)
	if err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	sum := &reports.Summary{Scenario: s.Name}
	for i, pt := range plan.Points {
		b, err := json.Marshal(pt.Params)
		if err != nil {
			t.Fatal(err)
		}
		var params map[string]any
		if err := json.Unmarshal(b, &params); err != nil {
			t.Fatal(err)
		}
		v := float64(i + 1)
		ooo := uint64(i + 1)
		fct := reports.FCTSummary{Count: 10, Mean: 1000 * v, Min: int64(100 * v), P50: int64(900 * v), P99: int64(5000 * v), Max: int64(9000 * v)}
		sd := reports.SlowdownSummary{Count: 10, Mean: v, Min: 1, P50: v, P99: 5 * v, Max: 9 * v}
		ps := reports.PointSummary{Name: pt.Name, Params: params, Status: reports.StatusOK, Flows: 10,
			FCT: fct, Slowdown: sd, OutOfOrder: &ooo, PFCPauseFrames: uint64(i + 1), GoodputGbps: v}
		ps.Scheme, _ = params[reports.ParamScheme].(string)
		for _, bk := range []string{"<100KB", "100KB-1MB", ">=1MB"} {
			ps.BySize = append(ps.BySize, reports.BucketSummary{Bucket: bk, Flows: 10, FCT: fct, Slowdown: sd})
		}
		sum.Points = append(sum.Points, ps)
	}
	return sum
}

// Every scenario the claims file names is a built-in scenario whose
// quick cut applies, and every table cell and claim finds exactly one
// point of it, with a number.
func TestClaimsResolveAgainstTheirScenarios(t *testing.T) {
	t.Parallel()
	f, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Papers) == 0 {
		t.Fatal("no papers")
	}
	claims := 0
	for _, p := range f.Papers {
		claims += len(p.Claims)
		for _, sc := range p.Scenarios {
			s, err := scenarios.Load(sc.Name)
			if err != nil {
				t.Errorf("paper %s: %v", p.Name, err)
				continue
			}
			if err := Resolve(p, sc.Name, synthSummary(t, s)); err != nil {
				t.Errorf("paper %s, scenario %s:\n%v", p.Name, sc.Name, err)
			}
			q, err := scenarios.Load(sc.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Quick.Apply(q); err != nil {
				t.Errorf("paper %s: quick cut: %v", p.Name, err)
			} else if _, err := q.Variants(); err != nil {
				t.Errorf("paper %s: scenario %s cut for --quick: %v", p.Name, sc.Name, err)
			}
		}
	}
	if claims < 50 {
		t.Errorf("%d claims; the digest's §3 has more", claims)
	}
}

// A claims file that names an unknown metric, a scenario the paper does
// not run, or a comparison without its direction is refused.
func TestParseRefusesBadClaims(t *testing.T) {
	t.Parallel()
	head := "papers:\n  - name: P\n    digest: \"9\"\n    scenarios: [{name: papers/gemma}]\n    claims:\n      - "
	for claim, want := range map[string]string{
		`{text: t, metric: fct_avg, a: [x], b: y, expect: lower}`:                    `unknown metric "fct_avg"`,
		`{text: t, metric: ooo, bucket: "<100KB", a: [x], b: y, expect: lower}`:      "no size buckets",
		`{text: t, scenario: papers/hf2t, metric: ooo, a: [x], b: y, expect: lower}`: "not among the paper's",
		`{text: t, metric: ooo, a: [x], b: y}`:                                       `expect ""`,
		`{text: t, metric: ooo, order: [x]}`:                                         "two or more",
		`{text: t, metric: ooo, order: [x, y~z], best: w}`:                           "best w is not in order",
		`{text: t, metric: ooo, a: [x], b: y, expect: lower, colour: red}`:           "field colour not found",
	} {
		_, err := Parse([]byte(head+claim+"\n"), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", claim, err, want)
		}
	}
}
