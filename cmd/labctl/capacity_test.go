package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/reports/capacity"
)

// TestCapacityFindsTheLoadWhereTheSLOBreaks measures a small WebSearch
// workload at a light and a heavy load, then bisects with an SLO between
// the two: the answer must lie between them, every measured load must be
// judged by its own run, and each run archive must exist.
func TestCapacityFindsTheLoadWhereTheSLOBreaks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an emulated lab")
	}
	home, out := t.TempDir(), t.TempDir()
	capRun := func(args ...string) capacity.Result {
		t.Helper()
		stdout, stderr, err := labctl(t, home, append([]string{"capacity", "testdata/workload-small.yaml", "--out", out}, args...)...)
		if err != nil {
			t.Fatalf("capacity %v: %v\n%s", args, err, stderr)
		}
		var line struct{ Dir string }
		if err := json.Unmarshal([]byte(stdout), &line); err != nil {
			t.Fatalf("output %q: %v", stdout, err)
		}
		b, err := os.ReadFile(filepath.Join(line.Dir, "capacity.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res capacity.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"capacity.md", "capacity.html"} {
			if _, err := os.Stat(filepath.Join(line.Dir, f)); err != nil {
				t.Errorf("answer lacks %s", f)
			}
		}
		for _, s := range res.Steps {
			if _, err := os.Stat(filepath.Join(s.Ref, "summary.json")); err != nil {
				t.Errorf("load %g: run archive %q: %v", s.Load, s.Ref, err)
			}
		}
		return res
	}

	grid := capRun("--slo", "slowdown.mean<=1000", "--grid", "0.2,0.9")
	if len(grid.Steps) != 2 || !grid.Found || grid.Best != 0.9 {
		t.Fatalf("loose SLO: %+v", grid)
	}
	if grid.Steps[0].Value == nil || grid.Steps[1].Value == nil {
		t.Fatalf("loose SLO: a step was not measured: %+v", grid.Steps)
	}
	light, heavy := *grid.Steps[0].Value, *grid.Steps[1].Value
	if heavy <= light {
		t.Fatalf("mean slowdown %g at load 0.9 is not above %g at 0.2", heavy, light)
	}

	limit := (light + heavy) / 2
	res := capRun("--slo", fmt.Sprintf("slowdown.mean<=%g", limit), "--lo", "0.2", "--hi", "0.9", "--tol", "0.1")
	if !res.Found || res.Best < 0.2 || res.Best >= 0.9 || res.FirstMiss <= res.Best || res.FirstMiss-res.Best > 0.1+1e-9 {
		t.Errorf("bisection: best %g first miss %g, want 0.2 <= best < first miss <= 0.9 within 0.1\n%+v", res.Best, res.FirstMiss, res.Steps)
	}
	for _, s := range res.Steps {
		if s.Value == nil || s.Meets != (*s.Value <= limit) {
			t.Errorf("load %g: value %s judged meets=%v against %g", s.Load, s.Measured(), s.Meets, limit)
		}
	}

	_, stderr, err := labctl(t, home, "capacity", "testdata/incast-3to1.yaml", "--slo", "fct.p99<=1", "--out", out)
	if err == nil || !strings.Contains(stderr, "no workload traffic entry") {
		t.Errorf("a scenario without workload traffic: %v %s", err, stderr)
	}
}
