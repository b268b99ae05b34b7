package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/testinflux"
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

// capacity takes the run flags every lab verb shares: its runs write
// telemetry to the InfluxDB --influx-* name (the manifest records it and
// the database holds their samples), --max-concurrent is checked as run
// checks it, and --format json prints the answer.
func TestCapacityTakesTheSharedFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an emulated lab and influxd")
	}
	t.Parallel()
	srv := testinflux.Start(t)
	home, out := t.TempDir(), t.TempDir()
	if _, stderr, err := labctl(t, home, "capacity", "testdata/workload-small.yaml", "--slo", "fct.p99<=1", "--max-concurrent", "-1"); err == nil || !strings.Contains(stderr, "--max-concurrent -1") {
		t.Errorf("--max-concurrent -1: %v %s", err, stderr)
	}
	stdout, stderr, err := labctl(t, home, "capacity", "testdata/workload-small.yaml", "--out", out, "--slo", "slowdown.mean<=1000", "--grid", "0.3",
		"--influx-url", srv.URL, "--influx-bucket", srv.Bucket, "--max-concurrent", "2", "--format", "json")
	if err != nil {
		t.Fatalf("capacity: %v\n%s", err, stderr)
	}
	var ans struct {
		Dir   string  `json:"dir"`
		Best  float64 `json:"best_load"`
		Found bool    `json:"found"`
	}
	if err := json.Unmarshal([]byte(stdout), &ans); err != nil || !ans.Found || ans.Best != 0.3 {
		t.Fatalf("answer %q: %v", stdout, err)
	}
	b, err := os.ReadFile(filepath.Join(ans.Dir, "capacity.json"))
	var res capacity.Result
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || len(res.Steps) != 1 {
		t.Fatalf("capacity.json: %v %+v", err, res.Steps)
	}
	if m := readManifest(t, res.Steps[0].Ref); m.Telemetry == nil || m.Telemetry.Influx == nil || m.Telemetry.Influx.URL != srv.URL || m.Telemetry.Influx.Bucket != srv.Bucket {
		t.Errorf("the load's run names InfluxDB %+v, want %s %s", m.Telemetry, srv.URL, srv.Bucket)
	}
	if n := srv.Count(t, "port"); n == 0 {
		t.Errorf("InfluxDB holds no port samples of capacity's run")
	}
}
