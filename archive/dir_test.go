package archive

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirPaths pins the layout: every name here is on disk in archives
// users keep, so a change is a format change, not a refactoring.
func TestDirPaths(t *testing.T) {
	t.Parallel()
	d := Open("runs/r1/")
	prov := d.Provision("")
	provV := d.Provision("lb=ecmp/x")
	for _, tc := range []struct {
		name, got, want string
	}{
		{"path", d.Path(), "runs/r1"},
		{"id", d.ID(), "r1"},
		{"manifest", d.Manifest(), "runs/r1/manifest.json"},
		{"plan", d.Plan(), "runs/r1/plan.json"},
		{"executor job", d.ExecutorJob(), "runs/r1/executor.json"},
		{"flows", d.Flows(), "runs/r1/flows.csv"},
		{"summary", d.Summary(), "runs/r1/summary.json"},
		{"report", d.ReportHTML(), "runs/r1/report.html"},
		{"telemetry", d.Telemetry(), "runs/r1/telemetry"},
		{"telemetry file", d.TelemetryFile("queue"), "runs/r1/telemetry/queue.lp"},
		{"telemetry file of a path-like name", d.TelemetryFile("../x"), "runs/r1/telemetry/x.lp"},
		{"raw", d.Raw(), "runs/r1/raw"},
		{"raw point", d.RawPoint("a/b"), "runs/r1/raw/a_b"},
		{"schedule", d.Schedule("a/b"), "runs/r1/raw/a_b/schedule.json"},
		{"agent log", d.AgentLog("p", "h1"), "runs/r1/raw/p/h1.agent.log"},
		{"agent result", d.AgentResult("p", "h1"), "runs/r1/raw/p/h1.result.json.gz"},
		{"spool", d.Spool(), "runs/r1/spool/influx"},
		{"points", d.Points(), "runs/r1/points"},
		{"part", d.Part(3).Path(), "runs/r1/points/3"},
		{"part manifest", d.Part(3).Manifest(), "runs/r1/points/3/manifest.json"},
		{"part temp", d.PartTemp(3, "ab12").Path(), "runs/r1/points/.3.ab12"},
		{"provision", prov.Path(), "runs/r1/provision"},
		{"provision root", d.ProvisionRoot(), "runs/r1/provision"},
		{"provision variant", provV.Path(), "runs/r1/provision/lb=ecmp_x"},
		{"provision report", prov.Report(), "runs/r1/provision/report.json"},
		{"provision step", provV.Step("switch", "readback"), "runs/r1/provision/lb=ecmp_x/switch-readback.json"},
		{"derived profile", prov.DerivedProfile("rnic"), "runs/r1/provision/rnic-profile.yaml"},
		{"slurm", d.Slurm(), "runs/r1/slurm"},
		{"slurm script", d.SlurmScript(2), "runs/r1/slurm/array-2.sh"},
		{"slurm output", d.SlurmOutput(), "runs/r1/slurm/%A_%a.out"},
		{"slurm task outputs", d.SlurmTaskOutputs(4), "runs/r1/slurm/*_4.out"},
		{"slurm jobs", d.SlurmJobs(), "runs/r1/slurm/jobs.jsonl"},
	} {
		if want := filepath.FromSlash(tc.want); tc.got != want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, want)
		}
	}
	// plan.json records it with slashes on every OS
	if got := ScheduleRel("a/b"); got != "raw/a_b/schedule.json" {
		t.Errorf("ScheduleRel: %q", got)
	}
}

func TestCreateAndFiles(t *testing.T) {
	t.Parallel()
	d, err := Create(filepath.Join(t.TempDir(), "r1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{d.Raw(), d.Telemetry()} {
		if st, err := os.Stat(sub); err != nil || !st.IsDir() {
			t.Errorf("Create left no directory %s: %v", sub, err)
		}
	}
	if d.HasManifest() {
		t.Error("a new run has a manifest")
	}
	if ok, err := d.HasSummary(); ok || err != nil {
		t.Errorf("a new run has a summary: %v %v", ok, err)
	}
	for _, m := range []string{"queue", "port"} {
		if err := WriteBytes(d.TelemetryFile(m), []byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteBytes(filepath.Join(d.Telemetry(), "notes.txt"), nil); err != nil {
		t.Fatal(err)
	}
	files, err := d.TelemetryFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0] != d.TelemetryFile("port") || files[1] != d.TelemetryFile("queue") {
		t.Errorf("TelemetryFiles = %v, want port.lp and queue.lp in order", files)
	}
}

// TestWriteFileKeepsOld: a write that fails leaves the previous file and
// no temporary one, as the manifest's crash-safety needs.
func TestWriteFileKeepsOld(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "manifest.json")
	if err := WriteJSON(p, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, func(w io.Writer) error {
		_, _ = io.WriteString(w, "{\"a\": 2, \"cut")
		return errors.New("killed half-way")
	})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("failed write: %v, want an error naming %s", err, p)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("file after a failed write: %q", b)
	}
	if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	for _, id := range []string{"b", "a"} {
		if err := WriteJSON(Open(filepath.Join(out, id)).Manifest(), map[string]string{"run_id": id}); err == nil {
			t.Fatal("wrote into a directory that does not exist")
		}
		d, err := Create(filepath.Join(out, id))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(d.Manifest(), map[string]string{"run_id": id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Create(filepath.Join(out, "c")); err != nil { // started, no manifest yet
		t.Fatal(err)
	}
	dirs, err := List(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 || dirs[0].ID() != "a" || dirs[1].ID() != "b" {
		t.Errorf("List = %v, want a and b", dirs)
	}
}
