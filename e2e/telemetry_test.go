package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestEmulatedTelemetryFollowsTheSimulation runs two short workload points
// on a small emulated lab, with an epoch lead longer than the twin's idle
// tick so that idle samples are taken while agents wait, and reads the
// run's switch telemetry back from the archive:
//   - every sample not marked idle is one of a point's traffic samples:
//     on the grid epoch + k x interval, from the epoch to the first grid
//     instant after the point's last flow ended;
//   - every path (a port's interface counters, its COUNTERS_DB table, the
//     lossless queue's two) holds one sample per interval over the
//     point's simulated traffic window, +-1;
//   - idle samples are marked, never inside a point's simulated span, and
//     rare: per path, one when the lab started and at most one after each
//     point, at most one a second;
//   - nothing was coalesced (no collector_gap).
func TestEmulatedTelemetryFollowsTheSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s, err := scenarios.Parse([]byte(`name: tele
telemetry: {interval: 100us}
traffic:
  - {name: a, pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, seed: 1}
  - {name: b, pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, seed: 2}
`), "tele.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, pool, agent := emulatedLab(t, "leafspine:2x2:2")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, EpochLead: 1500 * time.Millisecond}
	began := time.Now()
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(began)
	m := readManifest(t, out.Dir)
	if len(m.Points) != 2 {
		t.Fatalf("%d points", len(m.Points))
	}
	type span struct {
		name                     string
		epoch, start, end, every int64
		last                     int64 // the grid instant at or after end
	}
	var spans []span
	for _, p := range m.Points {
		if p.Status != "ok" || p.TelemetryIntervalNs != int64(100*time.Microsecond) {
			t.Fatalf("point %s: %s, interval %d", p.Name, p.Status, p.TelemetryIntervalNs)
		}
		sp := span{name: p.Name, epoch: pointEpoch(t, out.Dir, p.Name), start: p.StartNs, end: p.EndNs, every: p.TelemetryIntervalNs}
		sp.last = sp.epoch + (sp.end-sp.epoch+sp.every-1)/sp.every*sp.every
		spans = append(spans, sp)
	}

	// A path: a device's port or queue as one gNMI notification carries it.
	type path struct{ meas, device, port, queue, table string }
	pathOf := func(p collectors.Point) path {
		table := "openconfig"
		if _, ok := p.Fields["pfc3_tx"]; ok {
			table = "COUNTERS_DB"
		} else if _, ok := p.Fields["depth_bytes"]; ok {
			table = "COUNTERS_DB"
		}
		return path{p.Measurement, p.Tags["device"], p.Tags["port"], p.Tags["queue"], table}
	}
	inWindow := map[string]map[path]int{} // point -> path -> samples in [start, end]
	idle := map[path]int{}
	seen := map[path]map[int64]bool{}
	var traffic, gaps int
	for _, meas := range []string{"port", "queue", "collector_gap"} {
		err := collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", meas+".lp"), func(p collectors.Point) error {
			if meas == "collector_gap" {
				gaps++
				return nil
			}
			ts, k := p.Time.UnixNano(), pathOf(p)
			if seen[k] == nil {
				seen[k] = map[int64]bool{}
			}
			if seen[k][ts] {
				return fmt.Errorf("%v: two samples at %d", k, ts)
			}
			seen[k][ts] = true
			if p.Idle() {
				idle[k]++
				for _, sp := range spans {
					if ts >= sp.epoch && ts <= sp.last {
						return fmt.Errorf("%v: idle sample at %d inside point %s's simulated span", k, ts, sp.name)
					}
				}
				return nil
			}
			traffic++
			for _, sp := range spans {
				if ts < sp.epoch || ts > sp.last+sp.every {
					continue
				}
				if (ts-sp.epoch)%sp.every != 0 {
					return fmt.Errorf("%v: sample at epoch+%d ns of point %s, off the %d ns grid", k, ts-sp.epoch, sp.name, sp.every)
				}
				if ts >= sp.start && ts <= sp.end {
					if inWindow[sp.name] == nil {
						inWindow[sp.name] = map[path]int{}
					}
					inWindow[sp.name][k]++
				}
				return nil
			}
			return fmt.Errorf("%v: unmarked sample at %d outside every point's simulated span", k, ts)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if gaps != 0 {
		t.Errorf("%d collector gaps: samples were lost or coalesced", gaps)
	}
	for _, sp := range spans {
		want := float64(sp.end-sp.start) / float64(sp.every)
		n := 0
		for k, got := range inWindow[sp.name] {
			if k.meas == "queue" && k.queue != "3" {
				continue // other queues report once they carried traffic
			}
			n++
			if d := float64(got) - want; d < -1 || d > 1 {
				t.Errorf("point %s, %v: %d samples over %d ns of traffic, want %.1f +-1", sp.name, k, got, sp.end-sp.start, want)
			}
		}
		// 2 spines x 2 ports + 2 leaves x 4 ports, two tables each for the
		// port and for queue 3.
		if n != 12*4 {
			t.Errorf("point %s: %d paths with samples in the window, want 48", sp.name, n)
		}
	}
	if len(idle) == 0 {
		t.Error("no idle sample at all: the twin's idle tick or its mark is gone")
	}
	for k, n := range idle {
		// one when the lab started, one after each point, at most one a second
		if limit := min(len(spans)+1, int(wall/time.Second)+1); n > limit {
			t.Errorf("%v: %d idle samples in a %v run of %d points, want at most %d", k, n, wall.Round(time.Millisecond), len(spans), limit)
		}
	}
	t.Logf("%d traffic samples, %d idle paths, run %v", traffic, len(idle), wall.Round(time.Millisecond))

	// The report counts the traffic samples only.
	sum, err := reports.ReadSummary(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sum.Points {
		if p.TelemetryPoints == 0 || p.Gaps != 0 {
			t.Errorf("report point %s: %d telemetry points, %d gaps", p.Name, p.TelemetryPoints, p.Gaps)
		}
	}
}

// pointEpoch is where the twin put a point's epoch, as its agents report.
func pointEpoch(t *testing.T, dir, point string) int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "raw", point, "*.result.json.gz"))
	if len(files) == 0 {
		t.Fatalf("point %s: no agent result", point)
	}
	var epoch int64
	for _, f := range files {
		rc, err := agent.OpenResult(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := agent.ReadResult(rc, func(*agent.Result, perftest.FlowRecord) error { return nil })
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if epoch != 0 && r.EpochNs != epoch {
			t.Fatalf("point %s: agents report epochs %d and %d", point, epoch, r.EpochNs)
		}
		epoch = r.EpochNs
	}
	return epoch
}
