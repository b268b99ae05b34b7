package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/reports"
)

// TestGatherFoldsPointsInPlanOrder: points' results become one archive in
// plan order, whatever order they were written in: manifest points, flows
// rows, telemetry tagged by point, raw entries; a point without a result
// is recorded failed, naming its task's output.
func TestGatherFoldsPointsInPlanOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := []string{"w/load=0.3", "w/load=0.6", "w/load=0.9"}
	var head bytes.Buffer
	if err := reports.WriteFlowsHeader(&head); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 0} { // 1 has no result
		part := archive.Open(dir).Part(i).Path()
		m := &reports.Manifest{RunID: "r", Points: []reports.PointMeta{{Name: names[i], Status: pointOK, Executor: "slurm", JobID: "7_" + string(rune('0'+i))}}}
		os.MkdirAll(filepath.Join(part, "telemetry"), 0o755)
		if err := archive.WriteManifest(archive.Open(part), m); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(part, "flows.csv"), []byte(head.String()+"row of "+names[i]+"\n"), 0o644)
		os.MkdirAll(filepath.Join(part, "raw", safeName(names[i])), 0o755)
		var lp bytes.Buffer
		collectors.EncodeLP(&lp, collectors.Point{Measurement: "port", Tags: map[string]string{"device": "leaf1"},
			Fields: map[string]any{"tx_bytes": uint64(i)}, Time: time.Unix(0, int64(i))})
		os.WriteFile(filepath.Join(part, "telemetry", "port.lp"), append(lp.Bytes(), "torn,line"...), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "slurm"), 0o755)
	os.WriteFile(filepath.Join(dir, "slurm", "7_1.out"), []byte("killed"), 0o644)
	r := &Runner{}
	r.defaults()
	st := &runState{r: r, dir: dir, m: &reports.Manifest{RunID: "r"}, out: &Outcome{},
		plan: &Plan{Points: []Point{{Name: names[0]}, {Name: names[1]}, {Name: names[2]}}}}
	if err := st.gather(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range st.m.Points {
		got = append(got, p.Name+" "+p.Status+" "+p.Error)
	}
	want := []string{names[0] + " ok ", names[1] + " failed no result: the point did not run to the end (its task's output: slurm/7_1.out)", names[2] + " ok "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("points:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(st.failures) != 1 || st.failures[0].point != names[1] {
		t.Errorf("failures %+v", st.failures)
	}
	flows, _ := os.ReadFile(filepath.Join(dir, "flows.csv"))
	if want := head.String() + "row of " + names[0] + "\nrow of " + names[2] + "\n"; string(flows) != want {
		t.Errorf("flows.csv:\n%s\nwant\n%s", flows, want)
	}
	tel, _ := os.ReadFile(filepath.Join(dir, "telemetry", "port.lp"))
	lines := strings.Split(strings.TrimSpace(string(tel)), "\n")
	if len(lines) != 2 {
		t.Fatalf("telemetry (the torn lines dropped):\n%s", tel)
	}
	for k, i := range []int{0, 2} {
		p, err := collectors.ParseLP(lines[k])
		if err != nil || p.Tags[collectors.TagPoint] != names[i] || p.Tags["device"] != "leaf1" {
			t.Errorf("line %d: %q: %+v %v", k, lines[k], p, err)
		}
	}
	for _, i := range []int{0, 2} {
		if _, err := os.Stat(filepath.Join(dir, "raw", safeName(names[i]))); err != nil {
			t.Errorf("raw of %s: %v", names[i], err)
		}
	}
	// Gathering again (after a resume) gives the same files.
	if err := st.gather(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "telemetry", "port.lp")); !bytes.Equal(again, tel) {
		t.Errorf("second gather:\n%s\nfirst:\n%s", again, tel)
	}
}
