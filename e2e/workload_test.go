package e2e_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/internal/testinflux"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestWorkloadMatrixEndToEnd runs the shipped acceptance matrix
// (scenarios/workload-matrix.yaml: ECMP x load {0.3, 0.5, 0.7} x
// {WebSearch, AliStorage}, 2 repetitions) on an emulated leaf-spine with
// the packet engine (the scenario pins it: its lb needs it). It must run to
// the end on one lab, every point must achieve its requested load within
// 5 %, the mean FCT of each workload must rise with load, and every point
// must leave RNIC counter samples in the archive and in InfluxDB.
func TestWorkloadMatrixEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	influx := testinflux.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := scenarios.Load("workload-matrix")
	if err != nil {
		t.Fatal(err)
	}
	labs := &emulatedLabs{t: t}
	r := &scenarios.Runner{Labs: labs, OutDir: t.TempDir(), AgentPath: fakeAgent(t),
		Influx: &collectors.InfluxConfig{URL: influx.URL, Bucket: influx.Bucket, Org: influx.Org, Token: influx.Token}}
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(labs.opens) != 1 {
		t.Errorf("one lab serves every variant; opened %v", labs.opens)
	}
	m := readManifest(t, out.Dir)
	if m.Outcome != "ok" || len(m.Points) != 12 {
		t.Fatalf("outcome %q, %d points", m.Outcome, len(m.Points))
	}
	type key struct {
		workload string
		load     float64
	}
	byPoint := map[string]key{}
	for _, p := range m.Points {
		if p.Status != "ok" {
			t.Errorf("%s: %s %s", p.Name, p.Status, p.Error)
		}
		if miss := math.Abs(p.AchievedLoad-p.RequestedLoad) / p.RequestedLoad; p.RequestedLoad == 0 || miss > 0.05 {
			t.Errorf("%s: achieved load %.3f for a requested %.2f", p.Name, p.AchievedLoad, p.RequestedLoad)
		}
		w, _ := p.Params[reports.ParamWorkload].(string)
		l, _ := p.Params[reports.ParamLoad].(float64)
		if p.Params[reports.ParamScheme] != "ecmp" || w == "" || l != p.RequestedLoad {
			t.Errorf("%s: params %v", p.Name, p.Params)
		}
		byPoint[p.Name] = key{w, l}
	}

	// Mean FCT per workload and load, pooled over the repetitions.
	type acc struct{ sum, n float64 }
	fct := map[key]*acc{}
	f, err := os.Open(filepath.Join(out.Dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = reports.ReadFlowsCSV(f, func(row reports.FlowRow) error {
		k, ok := byPoint[row.Point]
		if !ok || row.Status != "ok" {
			return fmt.Errorf("flow %d of %q: status %s", row.FlowID, row.Point, row.Status)
		}
		if fct[k] == nil {
			fct[k] = &acc{}
		}
		fct[k].sum += float64(row.FCTNs)
		fct[k].n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"websearch", "alistorage2019"} {
		var means []float64
		for _, l := range []float64{0.3, 0.5, 0.7} {
			a := fct[key{w, l}]
			if a == nil || a.n == 0 {
				t.Fatalf("%s at %.1f: no flows", w, l)
			}
			means = append(means, a.sum/a.n)
		}
		t.Logf("%s: mean FCT %.0f / %.0f / %.0f ns at load 0.3 / 0.5 / 0.7", w, means[0], means[1], means[2])
		if !sort.Float64sAreSorted(means) || means[0] == means[2] {
			t.Errorf("%s: mean FCT must rise with load, got %.0f, %.0f, %.0f ns", w, means[0], means[1], means[2])
		}
	}

	// RNIC counters: two samples per host and point, in the archive and
	// in InfluxDB; the packet engine's DCQCN sent CNPs at 0.7 load.
	samples, cnps := 0, uint64(0)
	err = collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "rnic.lp"), func(p collectors.Point) error {
		if p.Tags["run"] != out.RunID || p.Tags["host"] == "" || p.Tags["device"] != "mlx5_0" {
			return fmt.Errorf("rnic point tags %v", p.Tags)
		}
		samples++
		v, _ := collectors.Uint(p.Fields["np_cnp_sent"])
		cnps = max(cnps, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 12 * 2 * 8; samples != want {
		t.Errorf("%d rnic samples, want 12 points x 2 x 8 hosts = %d", samples, want)
	}
	if cnps == 0 {
		t.Error("no host's np_cnp_sent grew")
	}
	q := fmt.Sprintf(`from(bucket:%q) |> range(start: -1h, stop: 1h) |> filter(fn: (r) => r._measurement == "rnic" and r.run == %q and r._field == "np_cnp_sent") |> count()`, influx.Bucket, out.RunID)
	var n int64
	for _, row := range influx.Flux(t, q) {
		if v, ok := row["_value"].(int64); ok {
			n += v
		}
	}
	if n != int64(samples) {
		t.Errorf("InfluxDB has %d rnic np_cnp_sent points, the archive %d", n, samples)
	}
}
