package capacity

import (
	"context"
	"errors"
	"testing"
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
	slo := SLO{Metric: "slowdown.p99", Max: 5} // met up to 0.63 + 0.03 = 0.66
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
	slo := SLO{Metric: "m", Max: 5}
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
	res, err := Search(context.Background(), m, SLO{Metric: "m", Max: 5}, Options{Grid: []float64{0.8, 0.2, 0.6, 0.4},
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
	if _, err := Search(ctx, m, SLO{Max: 1}, Options{Lo: 0.1, Hi: 0.9}); !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("err %v after %d measurements", err, n)
	}
}
