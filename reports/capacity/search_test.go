package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
)

// knee is a metric that stays at 2 up to the knee and then grows fast,
// like p99 slowdown against load.
func knee(at float64) Measure {
	return func(_ context.Context, load float64) (float64, string, error) {
		if load <= at {
			return 2, "", nil
		}
		return 2 + 100*(load-at), "", nil
	}
}

func TestBisectFindsTheKnee(t *testing.T) {
	slo := SLO{Metric: "slowdown.p99", Op: "<=", Limit: 5} // met up to 0.63 + 0.03 = 0.66
	res, err := Search(context.Background(), knee(0.63), slo, Options{Lo: 0.1, Hi: 0.9, Tol: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Best > 0.66 || 0.66-res.Best > 0.01 || res.FirstMiss <= 0.66 || res.FirstMiss-res.Best > 0.01 {
		t.Errorf("best %v first miss %v, want the bracket around 0.66 within 0.01; steps %+v", res.Best, res.FirstMiss, res.Steps)
	}
	if res.NonMonotonic {
		t.Error("a monotonic curve reported as non-monotonic")
	}
	for i := 1; i < len(res.Steps); i++ {
		if res.Steps[i].Load < res.Steps[i-1].Load {
			t.Fatal("steps not sorted by load")
		}
	}
}

func TestBisectEdges(t *testing.T) {
	slo := SLO{Metric: "m", Op: "<=", Limit: 5}
	res, _ := Search(context.Background(), knee(0.05), slo, Options{Lo: 0.1, Hi: 0.9})
	if res.Found || len(res.Steps) != 1 {
		t.Errorf("lowest load misses: found %v with %d steps", res.Found, len(res.Steps))
	}
	res, _ = Search(context.Background(), knee(0.95), slo, Options{Lo: 0.1, Hi: 0.9})
	if !res.Found || res.Best != 0.9 || len(res.Steps) != 2 {
		t.Errorf("whole range meets: best %v steps %d", res.Best, len(res.Steps))
	}
	if _, err := Search(context.Background(), knee(0.5), slo, Options{Lo: 0.5, Hi: 0.5}); err == nil {
		t.Error("empty range accepted")
	}
}

func TestGridFailedPointsAndNonMonotonic(t *testing.T) {
	vals := map[float64]float64{0.2: 1, 0.4: 9, 0.6: 3}
	m := func(_ context.Context, l float64) (float64, string, error) {
		if l == 0.8 {
			return 0, "runs/x", errors.New("point timed out")
		}
		return vals[l], "", nil
	}
	var seen int
	res, err := Search(context.Background(), m, SLO{Metric: "m", Op: "<=", Limit: 5}, Options{Grid: []float64{0.8, 0.2, 0.6, 0.4},
		Progress: func(s Step, done, planned int) { seen = done; _ = planned }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Best != 0.6 || res.FirstMiss != 0.4 || !res.NonMonotonic || seen != 4 {
		t.Errorf("grid: %+v (progress saw %d)", res, seen)
	}
	if s := res.Steps[3]; s.Load != 0.8 || s.Meets || s.Err == "" || s.Ref != "runs/x" {
		t.Errorf("failed step %+v: must be a miss with its error and evidence", s)
	}
}

func TestSearchStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	m := func(ctx context.Context, l float64) (float64, string, error) {
		n++
		cancel()
		return 0, "", ctx.Err()
	}
	if _, err := Search(ctx, m, SLO{Op: "<=", Limit: 1}, Options{Lo: 0.1, Hi: 0.9}); !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("err %v after %d measurements", err, n)
	}
}

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SLO
	}{
		{"slowdown.p99[<100KB]<=10", SLO{Metric: "slowdown.p99", Bucket: "<100KB", Op: "<=", Limit: 10}},
		{" fct.p99 <= 2e6 ", SLO{Metric: "fct.p99", Op: "<=", Limit: 2e6}},
		{"goodput_gbps>=90", SLO{Metric: "goodput_gbps", Op: ">=", Limit: 90}},
		{"fct.mean[100KB-1MB]<=500000", SLO{Metric: "fct.mean", Bucket: "100KB-1MB", Op: "<=", Limit: 500000}},
	} {
		got, err := ParseSLO(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := ParseSLO(got.String()); err != nil || again != got {
			t.Errorf("String() %q does not parse back: %+v %v", got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "slowdown.p99", "slowdown.p99 < 10", "p99<=ten", "x<=NaN", "x[<=1"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) accepted", bad)
		}
	}
}

func TestValueIsTheWorstRepetition(t *testing.T) {
	ms := []reports.Metric{
		{Group: "a", Name: "slowdown.p99", Bucket: "<100KB", Values: []float64{4, 9}},
		{Group: "b", Name: "slowdown.p99", Bucket: "<100KB", Values: []float64{6}},
		{Group: "a", Name: "slowdown.p99", Values: []float64{50}},
		{Group: "a", Name: "goodput_gbps", Values: []float64{91, 88}},
	}
	if v, err := Value(ms, SLO{Metric: "slowdown.p99", Bucket: "<100KB", Op: "<=", Limit: 10}); err != nil || v != 9 {
		t.Errorf("<=: %v %v, want the highest, 9", v, err)
	}
	if v, err := Value(ms, SLO{Metric: "goodput_gbps", Op: ">=", Limit: 90}); err != nil || v != 88 {
		t.Errorf(">=: %v %v, want the lowest, 88", v, err)
	}
	if _, err := Value(ms, SLO{Metric: "slowdown.p99", Bucket: ">1MB", Op: "<=", Limit: 10}); err == nil || !strings.Contains(err.Error(), "slowdown.p99[>1MB]") {
		t.Errorf("missing metric: %v", err)
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"slowdown.p99[<100KB]<=10", "goodput_gbps>=90", "x[]<=1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		if again, err := ParseSLO(slo.String()); err != nil || again != slo {
			t.Fatalf("%q -> %+v -> %q -> %+v %v", s, slo, slo.String(), again, err)
		}
	})
}

func TestRenderAnswerAndCurve(t *testing.T) {
	slo := SLO{Metric: "slowdown.p99", Bucket: "<100KB", Op: "<=", Limit: 5}
	res, err := Search(context.Background(), knee(0.63), slo, Options{Grid: []float64{0.2, 0.5, 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Answer(); a != "the highest load meeting slowdown.p99[<100KB]<=5 is 0.5 (it fails at 0.8)" {
		t.Errorf("answer %q", a)
	}
	var md, html strings.Builder
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| 0.8 | 19 | no |") || !strings.Contains(md.String(), "The highest load") ||
		!strings.Contains(md.String(), "ideal FCT includes the base round trip") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := WriteHTML(&html, res); err != nil {
		t.Fatal(err)
	}
	if h := html.String(); !strings.Contains(h, "<svg") || !strings.Contains(h, "SLO slowdown.p99[&lt;100KB]&lt;=5") ||
		!strings.Contains(h, "ideal FCT includes the base round trip") {
		t.Errorf("html lacks the curve, the SLO line or the slowdown's definition:\n%.600s", h)
	}
}

// A step that failed, or measured nothing, has no value: capacity.json
// leaves it out (JSON has no NaN) and keeps the answer of the others.
func TestFailedStepsKeepTheAnswerInJSON(t *testing.T) {
	m := func(_ context.Context, l float64) (float64, string, error) {
		switch l {
		case 0.8:
			return math.NaN(), "runs/x", errors.New("point timed out\nsecond line")
		case 0.6:
			return math.NaN(), "runs/y", nil // no flow of the SLO's bucket
		}
		return 3, "runs/z", nil
	}
	res, err := Search(context.Background(), m, SLO{Metric: "m", Op: "<=", Limit: 5}, Options{Grid: []float64{0.4, 0.6, 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteJSON(&b, res); err != nil {
		t.Fatalf("capacity.json: %v", err)
	}
	var back Result
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Found || back.Best != 0.4 || back.FirstMiss != 0.6 || len(back.Steps) != 3 {
		t.Fatalf("answer lost: %s", b.String())
	}
	if v := back.Steps[0].Value; v == nil || *v != 3 {
		t.Errorf("measured step: value %v", v)
	}
	for _, s := range back.Steps[1:] {
		if s.Value != nil || s.Meets {
			t.Errorf("load %g: value %s meets %v, want no value and a miss", s.Load, s.Measured(), s.Meets)
		}
	}
	if got := back.Steps[2].Measured(); got != "not measured (point timed out)" {
		t.Errorf("Measured() = %q", got)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, res); err != nil || !strings.Contains(md.String(), "| 0.6 | not measured | no | runs/y |") {
		t.Errorf("markdown %v:\n%s", err, md.String())
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opt Options
		ok  bool
	}{
		{Options{Lo: 0.1, Hi: 0.9}, true},
		{Options{Lo: 0.5, Hi: 0.2}, false},
		{Options{Lo: 0.1, Hi: 1.2}, false},
		{Options{Lo: 0, Hi: 0.5}, false},
		{Options{Grid: []float64{0.3, 1}}, true},
		{Options{Grid: []float64{0.3, 1.5}}, false},
	} {
		if err := tc.opt.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v, want ok=%v", tc.opt, err, tc.ok)
		}
	}
}
