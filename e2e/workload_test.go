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
// 5 %, the report's mean FCT of each workload (summary.json) must rise with
// load, and every point must leave RNIC counter samples in the archive and
// in InfluxDB.
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
		if p.WindowNs != 10_000_000 { // the scenario's 10ms arrival window: reports take rates over it
			t.Errorf("%s: arrival window %d ns in the manifest, want 10ms", p.Name, p.WindowNs)
		}
		w, _ := p.Params[reports.ParamWorkload].(string)
		l, _ := p.Params[reports.ParamLoad].(float64)
		if p.Params[reports.ParamScheme] != "ecmp" || w == "" || l != p.RequestedLoad {
			t.Errorf("%s: params %v", p.Name, p.Params)
		}
		byPoint[p.Name] = key{w, l}
	}

	// FCT rises with load in the report itself: summary.json's groups (one
	// per workload and load, over the repetitions), the numbers
	// report.html shows.
	sum, err := reports.ReadSummary(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	fct := map[key]reports.GroupBucket{}
	for _, g := range sum.Groups {
		if len(g.BySize) == 0 || g.BySize[0].Bucket != "all" || g.OK != 2 {
			t.Fatalf("group %s: %d ok points, buckets %+v", g.Key, g.OK, g.BySize)
		}
		fct[key{g.Workload, g.Load}] = g.BySize[0]
	}
	if len(sum.Groups) != 6 {
		t.Errorf("%d groups, want 2 workloads x 3 loads", len(sum.Groups))
	}
	for _, w := range []string{"websearch", "alistorage2019"} {
		var means []float64
		for _, l := range []float64{0.3, 0.5, 0.7} {
			b, ok := fct[key{w, l}]
			if !ok || b.Flows == 0 || b.FCTMean.N != 2 {
				t.Fatalf("%s at %.1f: no group or no flows in the summary (%+v)", w, l, b)
			}
			means = append(means, b.FCTMean.Mean)
		}
		t.Logf("%s: mean FCT %.0f / %.0f / %.0f ns at load 0.3 / 0.5 / 0.7 (summary.json)", w, means[0], means[1], means[2])
		if !sort.Float64sAreSorted(means) || means[0] == means[2] {
			t.Errorf("%s: the report's mean FCT must rise with load, got %.0f, %.0f, %.0f ns", w, means[0], means[1], means[2])
		}
	}
	// Every flow of flows.csv belongs to a point and completed.
	f, err := os.Open(filepath.Join(out.Dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	err = reports.ReadFlowsCSV(f, func(row reports.FlowRow) error {
		if _, ok := byPoint[row.Point]; !ok || row.Status != "ok" {
			return fmt.Errorf("flow %d of %q: status %s", row.FlowID, row.Point, row.Status)
		}
		rows++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	flows := 0
	for _, p := range m.Points {
		flows += p.Flows
	}
	if rows != flows {
		t.Errorf("flows.csv has %d rows, the manifest %d flows", rows, flows)
	}

	// RNIC counters: two samples per host and point at least (before and
	// after; those polled during the traffic come on top), the same in the
	// archive and in InfluxDB; the packet engine's DCQCN sent CNPs at 0.7
	// load.
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
	if want := 12 * 2 * 8; samples < want {
		t.Errorf("%d rnic samples, want at least 12 points x 2 x 8 hosts = %d", samples, want)
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
