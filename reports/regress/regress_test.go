package regress

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
)

func f(v float64) *float64 { return &v }

func TestCompare(t *testing.T) {
	rules := &Thresholds{NoiseSigma: f(2), Rules: []Rule{
		{Metric: "fct.mean", Relative: f(0.10)},
		{Metric: "fct.p99", Bucket: "*", Relative: f(0.10), Absolute: f(50)},
		{Metric: "goodput_gbps", Absolute: f(2)},
		{Metric: "drops", Absolute: f(0)},
	}}
	g := "scheme=ecmp load=0.5"
	tests := []struct {
		name      string
		base, can reports.Metric
		regressed bool
		worse     float64
	}{
		{"within relative", met(g, "fct.mean", "", "ns", 100), met(g, "fct.mean", "", "ns", 109), false, 9},
		{"beyond relative", met(g, "fct.mean", "", "ns", 100), met(g, "fct.mean", "", "ns", 111), true, 11},
		{"better is never a regression", met(g, "fct.mean", "", "ns", 100), met(g, "fct.mean", "", "ns", 50), false, -50},
		{"absolute floor wins over small relative", met(g, "fct.p99", "<100KB", "ns", 100), met(g, "fct.p99", "<100KB", "ns", 140), false, 40},
		{"beyond absolute floor", met(g, "fct.p99", "<100KB", "ns", 100), met(g, "fct.p99", "<100KB", "ns", 151), true, 51},
		{"higher is better: goodput drop", met(g, "goodput_gbps", "", "Gb/s", 90), met(g, "goodput_gbps", "", "Gb/s", 87), true, 3},
		{"higher is better: goodput gain", met(g, "goodput_gbps", "", "Gb/s", 90), met(g, "goodput_gbps", "", "Gb/s", 95), false, -5},
		{"any new drop", met(g, "drops", "", "", 0), met(g, "drops", "", "", 1), true, 1},
		// Repetitions 100±10 on both sides: standard error of the
		// difference = sqrt(100/3+100/3) = 8.16, x2 = 16.3; with 10 %
		// relative the allowance is 26.3.
		{"noise absorbs a spread-out change", met(g, "fct.mean", "", "ns", 90, 100, 110), met(g, "fct.mean", "", "ns", 115, 125, 135), false, 25},
		{"noise does not absorb a larger one", met(g, "fct.mean", "", "ns", 90, 100, 110), met(g, "fct.mean", "", "ns", 117, 127, 137), true, 27},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Compare([]reports.Metric{tc.base}, []reports.Metric{tc.can}, rules)
			if len(v.Checks) != 1 {
				t.Fatalf("%d checks, want 1", len(v.Checks))
			}
			c := v.Checks[0]
			if c.Regressed != tc.regressed || abs(c.Worse-tc.worse) > 1e-9 {
				t.Errorf("regressed %v worse %v, want %v %v (%s)", c.Regressed, c.Worse, tc.regressed, tc.worse, c.Message())
			}
			if v.Passed() == tc.regressed {
				t.Errorf("Passed() = %v with regressed %v", v.Passed(), tc.regressed)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestCompareOnlyRuledMetricsMissingAndNew(t *testing.T) {
	rules := &Thresholds{Rules: []Rule{{Metric: "fct.*", Relative: f(0.1)}}}
	base := []reports.Metric{
		{Group: "a", Name: "fct.mean", Values: []float64{1}},
		{Group: "a", Name: "fct.mean", Bucket: "<100KB", Values: []float64{1}}, // no bucket rule: not checked
		{Group: "a", Name: "ecn_marked", Values: []float64{5}},                 // no rule: not checked
		{Group: "b", Name: "fct.mean", Values: []float64{1}},
	}
	cand := []reports.Metric{
		{Group: "a", Name: "fct.mean", Values: []float64{1}},
		{Group: "c", Name: "fct.mean", Values: []float64{1}},
	}
	v := Compare(base, cand, rules)
	if len(v.Checks) != 2 {
		t.Fatalf("checks %+v, want a and b fct.mean only", v.Checks)
	}
	if v.Checks[0].Regressed || !v.Checks[1].Missing || !v.Checks[1].Regressed || v.Checks[1].Group != "b" {
		t.Errorf("checks %+v: want a ok, b missing and regressed", v.Checks)
	}
	if len(v.New) != 1 || v.New[0] != "c" {
		t.Errorf("new groups %v, want [c]", v.New)
	}
}

func TestCompareRunAgainstItselfPasses(t *testing.T) {
	rules := &Thresholds{NoiseSigma: f(0), Rules: []Rule{{Metric: "*", Bucket: "*"}}}
	s := []reports.Metric{met("g", "fct.mean", "", "ns", 3, 4, 5), met("g", "goodput_gbps", "", "Gb/s", 10), met("g", "fct.p99", ">1MB", "ns", 7)}
	if v := Compare(s, s, rules); !v.Passed() || len(v.Checks) != 3 {
		t.Errorf("self comparison: %+v", v)
	}
}

func TestParseThresholdsErrors(t *testing.T) {
	doc := `noise_sigma: -1
rules:
  - metric: fct.mean
    relative: -0.1
  - bucket: "<100KB"
  - metric: "fct.["
    better: sideways
`
	_, err := ParseThresholds([]byte(doc), "th.yaml")
	if err == nil {
		t.Fatal("bad thresholds accepted")
	}
	for _, want := range []string{
		"th.yaml:1: noise_sigma: must be >= 0",
		"th.yaml:4: rules[0].relative: must be >= 0",
		"th.yaml:5: rules[1].metric: required",
		"th.yaml:6: rules[2].metric: bad pattern",
		"th.yaml:7: rules[2].better: must be lower or higher",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := ParseThresholds([]byte("rules:\n  - {metric: fct.mean, relativ: 0.1}\n"), "th.yaml"); err == nil || !strings.Contains(err.Error(), "th.yaml:2: rules[0].relativ: unknown field (known here: metric,") {
		t.Errorf("unknown key: %v", err)
	}
}

func TestRuleOrderFirstMatchWins(t *testing.T) {
	th, err := ParseThresholds([]byte("rules:\n  - {metric: fct.p99, bucket: '<100KB', relative: 0.5}\n  - {metric: 'fct.*', bucket: '*', relative: 0.1}\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := th.rule("fct.p99", "<100KB"); *r.Relative != 0.5 {
		t.Errorf("specific rule not first: %+v", r)
	}
	if r, _ := th.rule("fct.p99", ">1MB"); *r.Relative != 0.1 {
		t.Errorf("fallback rule: %+v", r)
	}
	if th.sigma() != DefaultNoiseSigma {
		t.Errorf("default sigma %v", th.sigma())
	}
}

func FuzzParseThresholds(f *testing.F) {
	f.Add([]byte("rules:\n  - {metric: fct.mean, relative: 0.1}\n"))
	f.Add([]byte("noise_sigma: 3\nrules:\n  - {metric: 'fct.*', bucket: '*', absolute: 5, better: lower}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		th, err := ParseThresholds(b, "fuzz.yaml")
		if err != nil {
			return
		}
		// Whatever parses must be usable.
		Compare([]reports.Metric{{Group: "g", Name: "fct.mean", Values: []float64{1}}}, nil, th)
	})
}

func TestDefaultThresholdsParse(t *testing.T) {
	th := DefaultThresholds()
	if r, ok := th.rule("fct.p99", "<100KB"); !ok || *r.Relative != 0.15 {
		t.Errorf("default fct.p99 per bucket: %+v %v", r, ok)
	}
	if _, ok := th.rule("goodput_gbps", ""); !ok {
		t.Error("default checks no goodput")
	}
}

func TestNumScales(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{{132500, "ns", "132.5 us"}, {2.5e9, "ns", "2.5 s"}, {999, "ns", "999 ns"}, {3.2e6, "B", "3.2 MB"}, {94.36, "Gb/s", "94.36 Gb/s"}, {0.25, "", "0.25"}} {
		if got := num(tc.v, tc.unit); got != tc.want {
			t.Errorf("num(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

// met is a metric with its values, for short tables.
func met(group, name, bucket, unit string, vals ...float64) reports.Metric {
	return reports.Metric{Group: group, Name: name, Bucket: bucket, Unit: unit, Values: vals}
}

// Every printed slowdown carries its convention (the ideal FCT includes
// the base round trip); other metrics do not get the note.
func TestSlowdownMessagesStateTheConvention(t *testing.T) {
	rules := &Thresholds{Rules: []Rule{{Metric: "*", Bucket: "*", Relative: f(0.1)}}}
	g := "scheme=ecmp load=0.5"
	base := []reports.Metric{met(g, "slowdown.p99", "", "", 3), met(g, "slowdown.mean", "<100KB", "", 2), met(g, "fct.mean", "", "ns", 100)}
	cand := []reports.Metric{met(g, "slowdown.p99", "", "", 4), met(g, "fct.mean", "", "ns", 100)}
	v := Compare(base, cand, rules)
	if len(v.Checks) != 3 {
		t.Fatalf("%d checks, want 3: %+v", len(v.Checks), v.Checks)
	}
	for _, c := range v.Checks {
		has := strings.Contains(c.Message(), reports.SlowdownIdeal)
		if want := strings.HasPrefix(c.Metric, "slowdown"); has != want {
			t.Errorf("%s (missing %v): convention stated %v, want %v: %s", c.Name(), c.Missing, has, want, c.Message())
		}
	}
}
