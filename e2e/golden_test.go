package e2e_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/reports"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestFlowResultsMatchGolden runs a small seeded workload point on an
// emulated leaf-spine with each engine and compares every flow's result
// (ids, ends, size, status, start relative to the point's first start,
// FCT) with a golden file made before schedules were split per host: how
// the schedule reaches the hosts and the twin must not change what the
// twin simulates. Rerun with -update only for a change that is meant to
// change the simulation.
func TestFlowResultsMatchGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for _, engine := range []string{"packet", "flow"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			inv, pool, agent, _ := emulatedLabWith(t, "leafspine:2x2:4@100", emulator.Options{Seed: 1, Engine: engine})
			o := runYAML(ctx, t, inv, pool, agent, `name: golden
traffic:
  - name: workload
    pattern: workload
    cdf: alistorage2019
    load: 0.5
    duration: 200us
    seed: 1
  - name: incast
    pattern: incast
    receiver: h1
    senders: 3
    bytes: 256KiB
`)
			got := flowLines(t, filepath.Join(o.Dir, "flows.csv"))
			golden := filepath.Join("testdata", "flows-"+engine+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("per-flow results differ from %s (first difference: %s)", golden, firstDiff(got, want))
			}
		})
	}
}

// flowLines is one line per flow of a run's flows.csv, by point and flow
// id, with times relative to the point's first start (epochs are wall
// time).
func flowLines(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []reports.FlowRow
	err = reports.ReadFlowsCSV(f, func(r reports.FlowRow) error { rows = append(rows, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no flows")
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Point != rows[j].Point {
			return rows[i].Point < rows[j].Point
		}
		return rows[i].FlowID < rows[j].FlowID
	})
	first := map[string]int64{}
	for _, r := range rows {
		if f, ok := first[r.Point]; !ok || r.StartNs < f {
			first[r.Point] = r.StartNs
		}
	}
	var b bytes.Buffer
	fmt.Fprintln(&b, "point,flow_id,group,src,dst,bytes,status,start_rel_ns,fct_ns")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%d,%s,%s,%s,%d,%s,%d,%d\n", r.Point, r.FlowID, r.Group, r.Src, r.Dst, r.Size, r.Status, r.StartNs-first[r.Point], r.FCTNs)
	}
	return b.Bytes()
}

func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) && i < len(w); i++ {
		if !bytes.Equal(g[i], w[i]) {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}
