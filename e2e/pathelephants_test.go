package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestElephantsPerPathReachTheReport: Reunion's elephants per link travel
// from the twin's module over the switches' gNMI targets and the
// collectors into the report. A ring all-reduce over every host of a
// 4 x 4 leaf-spine, 4 hosts a leaf (picked round robin over the racks,
// so every ring hop leaves its rack): each leaf sends 4 elephants of
// 4 MiB (about 6 intervals of s = 50 us each) over 4 uplinks and takes 4
// in. The point's summary has per-link counts on the fabric links only
// (none on a host's port), some link carried an elephant, no link more
// than the 4 one leaf sends or takes in one interval, and Reunion moved
// flows if any link carried more than t = 1; the report has the
// "Elephants per path" table with a row for the point.
func TestElephantsPerPathReachTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(`name: path-elephants
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
    labels: [reunion]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, counts := runSchemeCounts(t, p)
	pt := out.Summary.Points[0]
	var most, used uint64
	for _, l := range pt.PathElephants {
		t.Logf("%s %s: max %d, elephant-intervals %d", l.Device, l.Port, l.Max, l.Intervals)
		if !strings.HasPrefix(l.Device, "leaf") && !strings.HasPrefix(l.Device, "spine") {
			t.Errorf("per-link counts at %s, not a switch", l.Device)
		}
		if l.Intervals > 0 {
			used++
		}
		most = max(most, l.Max)
	}
	if most < 1 || used == 0 {
		t.Fatalf("no fabric link carried an elephant: %+v", pt.PathElephants)
	}
	if most > 4 {
		t.Errorf("a link carried %d elephants in one interval, more than one leaf sends or takes", most)
	}
	if most > 1 && counts["reunion"]["switch/reroutes"] == 0 {
		t.Errorf("%d elephants collided on a link and Reunion moved none: %v", most, counts["reunion"])
	}
	page, err := os.ReadFile(filepath.Join(out.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, tbl, ok := strings.Cut(string(page), "<h2>Elephants per path</h2>")
	if !ok {
		t.Fatalf("report.html has no Elephants per path table")
	}
	if tbl, _, _ = strings.Cut(tbl, "</table>"); !strings.Contains(tbl, "<td>reunion</td>") {
		t.Errorf("the Elephants per path table has no row for the Reunion point:\n%s", tbl)
	}
	t.Logf("%d links carried elephants, most on one %d; %v", used, most, counts["reunion"])
}
