package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/labctl/labctl/reports"
)

// TestElephantsPerPathReachTheReport: Reunion's elephants per link travel
// from the twin's module over the switches' gNMI targets and the
// collectors into the report. A ring all-reduce over every host of a
// 4 x 4 leaf-spine, 4 hosts a leaf (picked round robin over the racks,
// so every ring hop leaves its rack): each leaf sends 4 elephants of
// 4 MiB (about 6 intervals of s = 50 us each) over 4 uplinks and takes 4
// in. In each point the summary has per-link counts on the fabric links
// only (none on a host's port), some link carried an elephant, no link
// more than the 4 one leaf sends or takes in one interval, and Reunion
// moved flows if any link carried more than t = 1. The points run
// s = 50 us, 100 us, then 50 us again: the twin's modules change between
// them, and the third point's counts equal the first's (the twin is
// deterministic), so no point's count leans on another's. The report has
// the "Elephants per path" table with a row per point.
func TestElephantsPerPathReachTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	out, _ := runSchemeCounts(t, `name: path-elephants
lab: leafspine:4x4:4@100
telemetry:
  interval: 100us
traffic:
  - {name: ring, pattern: allreduce, hosts: 16, buffer: 64MiB, steps: 1}
matrix:
  - path: emulation
    name: scheme
    values:
      - {transport: gbn, lb: reunion, lb_params: {interval_us: "50"}}
      - {transport: gbn, lb: reunion, lb_params: {interval_us: "100"}}
      - {transport: gbn, lb: reunion, lb_params: {interval_us: "50"}}
    labels: [s50, s100, s50-again]
`)
	perPoint := map[string]string{}
	for _, pt := range out.Summary.Points {
		var most, used uint64
		for _, l := range pt.PathElephants {
			if !strings.HasPrefix(l.Device, "leaf") && !strings.HasPrefix(l.Device, "spine") {
				t.Errorf("%s: per-link counts at %s, not a switch", pt.Scheme, l.Device)
			}
			if l.Intervals > 0 {
				used++
			}
			most = max(most, l.Max)
		}
		t.Logf("%s: %d links carried elephants, most on one %d: %v", pt.Scheme, used, most, pt.PathElephants)
		if most < 1 || used == 0 {
			t.Errorf("%s: no fabric link carried an elephant: %+v", pt.Scheme, pt.PathElephants)
		}
		if most > 4 {
			t.Errorf("%s: a link carried %d elephants in one interval, more than one leaf sends or takes", pt.Scheme, most)
		}
		if reroutes := schemeCount(pt.SchemeCounts, "reroutes"); most > 1 && reroutes == 0 {
			t.Errorf("%s: %d elephants collided on a link and Reunion moved none", pt.Scheme, most)
		}
		perPoint[pt.Scheme] = fmt.Sprint(pt.PathElephants)
	}
	if perPoint["s50"] != perPoint["s50-again"] {
		t.Errorf("the same point run twice counts differently:\n%s\n%s", perPoint["s50"], perPoint["s50-again"])
	}
	tbl := reportTable(t, out.Dir, "Elephants per path")
	for _, label := range []string{"s50", "s100", "s50-again"} {
		if !strings.Contains(tbl, "<td>"+label+"</td>") {
			t.Errorf("the Elephants per path table has no row for point %s:\n%s", label, tbl)
		}
	}
}

// schemeCount is the switches' counter name in counts (0: absent).
func schemeCount(counts []reports.SchemeCount, name string) uint64 {
	for _, c := range counts {
		if c.Name == name && c.Scope == "switch" {
			return c.Value
		}
	}
	return 0
}
