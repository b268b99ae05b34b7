package e2e_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/internal/testinflux"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestShippedScenariosEndToEnd runs scenarios/incast.yaml and
// scenarios/allreduce.yaml on the built-in emulated leaf-spine.
func TestShippedScenariosEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	influx := testinflux.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	inv, pool, agentBin := emulatedLab(t, scenarios.DefaultLab)
	out := t.TempDir()
	run := func(name string) (*scenarios.Outcome, *reports.PointSummary) {
		t.Helper()
		s, err := scenarios.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: out, AgentPath: agentBin,
			Influx: &collectors.InfluxConfig{URL: influx.URL, Bucket: influx.Bucket, Org: influx.Org, Token: influx.Token}}
		o, err := r.Run(ctx, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(o.Summary.Points) != 1 {
			t.Fatalf("%s: %d points in summary", name, len(o.Summary.Points))
		}
		for _, f := range []string{"manifest.json", "plan.json", "flows.csv", "summary.json", "report.html"} {
			if _, err := os.Stat(filepath.Join(o.Dir, f)); err != nil {
				t.Errorf("%s: archive lacks %s", name, f)
			}
		}
		return o, &o.Summary.Points[0]
	}

	t.Run("incast", func(t *testing.T) {
		o, p := run("incast")
		const linkBps = 100e9
		if p.Flows != 16 {
			t.Fatalf("flows = %d, want 16", p.Flows)
		}
		// All 16 MiB cross the receiver's one 100 Gb/s port.
		minLast := 16 * (1 << 20) * 8 / linkBps * 1e9
		if float64(p.FCT.Max) < minLast {
			t.Errorf("last flow finished after %d ns, faster than 16 MiB at line rate (%.0f ns)", p.FCT.Max, minLast)
		}
		// At most line rate less the headers (4096 of every 4178 bytes on
		// the wire). DCQCN cuts the senders to a crawl while the start-up
		// burst drains and they recover on a 300 us timer, so the port may
		// idle now and then (84-95 Gb/s depending on ECMP's paths), but
		// not for most of the run.
		if g, most := p.GoodputGbps, 100*4096/4178.0; g < most/2 || g > most {
			t.Errorf("goodput %.2f Gb/s, want between half and all of line rate less headers (%.2f Gb/s)", g, most)
		}
		if p.TelemetryPoints == 0 {
			t.Fatal("no telemetry points in the incast window")
		}
		if p.PeakQueueBytes == 0 {
			t.Error("16:1 incast built no queue at all")
		}
		// The receiver's RNIC marks congestion back to the senders (DCQCN),
		// read from the hosts' hw_counters before and after the point.
		if p.OutOfOrder == nil || p.RNIC["np_cnp_sent"] == 0 || p.RNIC["rp_cnp_handled"] == 0 {
			t.Errorf("RNIC counters of the point: out of order %v, %v; want CNPs sent and handled", p.OutOfOrder, p.RNIC)
		}
		checkInflux(t, influx, o.RunID)
		checkCountersGrow(t, o.Dir)
	})

	t.Run("allreduce", func(t *testing.T) {
		_, p := run("allreduce")
		if p.Flows != 2*(8-1)*8 {
			t.Fatalf("flows = %d, want 2(N-1)N = 112", p.Flows)
		}
		ar := p.AllReduce
		if ar == nil || len(ar.Steps) != 14 {
			t.Fatalf("want 14 all-reduce steps, got %+v", ar)
		}
		if ar.BusBWGbps <= 0 || ar.BusBWGbps > 100 {
			t.Errorf("busbw %.2f Gb/s must be in (0, 100] (link rate)", ar.BusBWGbps)
		}
		if want := ar.AlgBWGbps * 2 * 7 / 8; math.Abs(ar.BusBWGbps-want) > 1e-6*want {
			t.Errorf("busbw %.4f != algbw*2(n-1)/n = %.4f", ar.BusBWGbps, want)
		}
	})
}

// checkInflux queries the run's telemetry back from InfluxDB with Flux.
func checkInflux(t *testing.T, influx *testinflux.Server, runID string) {
	t.Helper()
	q := fmt.Sprintf(`from(bucket:%q) |> range(start: -1h, stop: 1h) |> filter(fn: (r) => r._measurement == "port" and r.run == %q and r._field == "tx_bytes") |> count()`, influx.Bucket, runID)
	rows := influx.Flux(t, q)
	var n int64
	for _, r := range rows {
		if v, ok := r["_value"].(int64); ok {
			n += v
		}
	}
	if n == 0 {
		t.Fatalf("no port tx_bytes points for run %s in InfluxDB (rows %v)", runID, rows)
	}
}

// checkCountersGrow reads the archived line protocol and requires the tx
// bytes of at least one switch port to grow during the run.
func checkCountersGrow(t *testing.T, dir string) {
	t.Helper()
	first, last := map[string]uint64{}, map[string]uint64{}
	err := collectors.ReadLPFile(filepath.Join(dir, "telemetry", "port.lp"), func(p collectors.Point) error {
		v, ok := collectors.Uint(p.Fields["tx_bytes"])
		if !ok {
			return nil
		}
		k := p.Tags["device"] + ":" + p.Tags["port"]
		if _, seen := first[k]; !seen {
			first[k] = v
		}
		last[k] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	grew := 0
	for k := range last {
		if last[k] > first[k] {
			grew++
		}
	}
	if grew == 0 {
		t.Fatalf("no switch port's tx_bytes grew over %d ports", len(last))
	}
}
