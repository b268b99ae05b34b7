package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/executor/slurm"
	"github.com/labctl/labctl/internal/testslurm"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/reports/capacity"
)

// slurmScenario is a 16-point matrix (2 loads x 8 seeds) of tiny workload
// points on a small emulated lab.
const slurmScenario = `name: sl16
lab: leafspine:1x2:2@100
repetitions: 8
traffic:
  - {name: w, pattern: workload, cdf: websearch, load: 0.3, duration: 200us}
matrix:
  - path: traffic[0].load
    values: [0.3, 0.6]
`

// slurmSetup starts a cluster of 2 task slots and writes the scenario.
func slurmSetup(t *testing.T, scenario string) (*testslurm.Cluster, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Slurm cluster and labs")
	}
	cl := testslurm.Start(t, 2)
	sc := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return cl, sc
}

// slurmRunDir runs labctl with env added and returns the run directory of
// its ok run.
func slurmRunDir(t *testing.T, env []string, args ...string) string {
	t.Helper()
	stdout, stderr := mustRun(t, env, args...)
	var out struct {
		Dir     string `json:"run_dir"`
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.Outcome != "ok" {
		t.Fatalf("run: %v: %q\n%s", err, stdout, stderr)
	}
	return out.Dir
}

// TestSlurmMatrixMatchesLocal: a 16-point matrix run as a Slurm array
// gives every point the flows and results the local run gives it (same
// seeds), the manifest says which job and node ran each point, and the
// report is the local one but for timing fields.
func TestSlurmMatrixMatchesLocal(t *testing.T) {
	cl, sc := slurmSetup(t, slurmScenario)
	outDir := t.TempDir()
	local := slurmRunDir(t, nil, "run", sc, "--out", outDir)
	start := time.Now()
	remote := slurmRunDir(t, cl.Env, "run", sc, "--out", outDir, "--executor", "slurm", "--slurm-labctl", labctlBin)
	t.Logf("slurm run of 16 points: %v", time.Since(start))

	// The archive reads as a local one: report, compare, and regress
	// (which finds no regression against the local run).
	mustRun(t, nil, "report", remote, "--format", "md")
	mustRun(t, nil, "compare", local, remote)
	mustRun(t, nil, "regress", "--baseline", local, "--candidate", remote)

	lm, rm := readManifest(t, local), readManifest(t, remote)
	if rm.Executor != "slurm" || len(rm.Points) != 16 || len(lm.Points) != 16 {
		t.Fatalf("executor %q, %d points (local %d)", rm.Executor, len(rm.Points), len(lm.Points))
	}
	jobs := map[string]bool{}
	for i, p := range rm.Points {
		if p.Name != lm.Points[i].Name || p.Status != "ok" {
			t.Errorf("point %d: %s %s, local %s", i, p.Name, p.Status, lm.Points[i].Name)
		}
		if p.Executor != "slurm" || p.Node != cl.Node || !strings.Contains(p.JobID, "_") {
			t.Errorf("point %s: executor %q job %q node %q", p.Name, p.Executor, p.JobID, p.Node)
		}
		jobs[p.JobID] = true
	}
	if len(jobs) != 16 {
		t.Errorf("%d distinct array tasks ran 16 points", len(jobs))
	}
	if l, r := flowResults(t, local), flowResults(t, remote); !reflect.DeepEqual(l, r) {
		t.Errorf("per-point flow results differ:\nlocal %v\nslurm %v", l, r)
	}
	// A local run's points share one lab, an array task's has a lab of
	// its own; the lab clears its switches' queue watermarks before each
	// point, so the points' switch figures (peak watermark, the queues
	// telemetry carries, mean queue depth) are the same either way.
	if d := jsonDiff("", untimedSummary(t, local), untimedSummary(t, remote)); len(d) > 0 {
		t.Errorf("summaries differ beyond timing (local, slurm):\n%s", strings.Join(d[:min(len(d), 20)], "\n"))
	}
}

func mustRun(t *testing.T, env []string, args ...string) (string, string) {
	t.Helper()
	o, e, err := labctlEnv(t, t.TempDir(), env, args...)
	if err != nil {
		t.Fatalf("labctl %s: %v\n%s\n%s", strings.Join(args, " "), err, o, e)
	}
	return o, e
}

func readManifest(t *testing.T, dir string) reports.Manifest {
	t.Helper()
	var m reports.Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// flowResults are flows.csv's rows by point, without the columns that
// depend on when the run was (run id, absolute start and end times).
func flowResults(t *testing.T, dir string) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	head := strings.Split(sc.Text(), ",")
	out := map[string][]string{}
	for sc.Scan() {
		cols := strings.Split(sc.Text(), ",")
		var keep []string
		point := ""
		for i, c := range cols {
			switch h := head[min(i, len(head)-1)]; h {
			case "run", "start_ns", "end_ns":
			case "point":
				point = c
			default:
				keep = append(keep, h+"="+c)
			}
		}
		out[point] = append(out[point], strings.Join(keep, ","))
	}
	for _, rows := range out {
		sort.Strings(rows) // hosts report in whatever order they finish
	}
	return out
}

// untimedSummary is summary.json without what says when the run was.
func untimedSummary(t *testing.T, dir string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return dropKeys(v, timing)
}

// timing are the summary's fields that say when a run or point was.
var timing = map[string]bool{"run_id": true, "started": true, "ended": true, "start_ns": true, "end_ns": true,
	"window_start_ns": true, "window_end_ns": true, "from_ns": true, "to_ns": true, "executor": true, "job_id": true, "node": true}

func dropKeys(v any, drop map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if drop[k] {
				delete(x, k)
			} else {
				x[k] = dropKeys(x[k], drop)
			}
		}
	case []any:
		for i := range x {
			x[i] = dropKeys(x[i], drop)
		}
	}
	return v
}

// jsonDiff lists where two decoded JSON documents differ.
func jsonDiff(at string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		var out []string
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		for k := range keys {
			out = append(out, jsonDiff(at+"."+k, x[k], y[k])...)
		}
		sort.Strings(out)
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		var out []string
		for i := range x {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", at, i), x[i], y[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %v, %v", at, a, b)}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// startLabctl starts labctl in the background; wait returns its result.
func startLabctl(t *testing.T, env []string, args ...string) (cmd *exec.Cmd, wait func() (string, string, error)) {
	t.Helper()
	cmd = exec.Command(labctlBin, args...)
	cmd.Env = append(append(os.Environ(), "LABCTL_HOME="+t.TempDir(), "LABCTL_INFLUX_URL="), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, func() (string, string, error) { err := cmd.Wait(); return o.String(), e.String(), err }
}

// submissions are the arrays a run submitted (slurm/jobs.jsonl).
func submissions(t *testing.T, dir string) []slurm.Submission {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "slurm", "jobs.jsonl"))
	var out []slurm.Submission
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s slurm.Submission
		if l != "" && json.Unmarshal([]byte(l), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// until polls ok every 50ms for up to d.
func until(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

func squeue(t *testing.T, cl *testslurm.Cluster, args ...string) []string {
	out, err := cl.Command("squeue", append([]string{"-h"}, args...)...).Output()
	if err != nil {
		t.Logf("squeue: %v", err)
	}
	return strings.Fields(string(out))
}

// TestSlurmRetriesKilledTask: a task cancelled while its point runs
// (scancel of one index) leaves no result, is submitted again, and the
// run completes with every point.
func TestSlurmRetriesKilledTask(t *testing.T) {
	cl, sc := slurmSetup(t, strings.Replace(slurmScenario, "repetitions: 8", "repetitions: 2", 1))
	out := t.TempDir()
	_, wait := startLabctl(t, cl.Env, "run", sc, "--out", out, "--executor", "slurm", "--slurm-labctl", labctlBin, "--retries", "1")
	killed := ""
	// A task cancelled after its point's result is written has finished
	// its work (its point needs no retry), however Slurm marks it: only a
	// task whose point has no result before and after the cancel counts.
	noResult := func(id string) bool {
		_, idx, ok := strings.Cut(id, "_")
		ms, _ := filepath.Glob(filepath.Join(out, "*", "manifest.json"))
		return ok && len(ms) == 1 && len(slurm.Missing(filepath.Dir(ms[0]), []int{atoi(idx)})) == 1
	}
	until(t, 60*time.Second, "a running task to cancel", func() bool {
		for _, id := range squeue(t, cl, "-t", "R", "-o", "%i") {
			if !noResult(id) {
				continue
			}
			if err := cl.Command("scancel", id).Run(); err != nil {
				continue
			}
			state := ""
			until(t, 20*time.Second, "task "+id+" to end", func() bool {
				out, _ := cl.Command("scontrol", "show", "job", "-o", id).Output()
				_, rest, _ := strings.Cut(string(out), "JobState=")
				state, _, _ = strings.Cut(rest, " ")
				return state != "RUNNING" && state != "COMPLETING"
			})
			if state == "CANCELLED" && noResult(id) { // not finished before the signal
				killed = id
				return true
			}
		}
		return false
	})
	stdout, stderr, err := wait()
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
	}
	var res struct {
		Dir     string `json:"run_dir"`
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Outcome != "ok" {
		t.Fatalf("outcome: %v %q\n%s", err, stdout, stderr)
	}
	m := readManifest(t, res.Dir)
	if len(m.Points) != 4 {
		t.Fatalf("%d points", len(m.Points))
	}
	_, idx, _ := strings.Cut(killed, "_")
	subs := submissions(t, res.Dir)
	if len(subs) != 2 || subs[1].Try != 1 || subs[1].Array != idx {
		t.Errorf("cancelled task %s; submissions %+v: want a retry of index %s alone", killed, subs, idx)
	}
	for _, p := range m.Points {
		if p.Status != "ok" {
			t.Errorf("point %s: %s %s", p.Name, p.Status, p.Error)
		}
		if p.Name == m.Points[atoi(idx)].Name && !strings.HasPrefix(p.JobID, subs[len(subs)-1].JobID+"_") {
			t.Errorf("point %s ran as %s, not in the retry %s", p.Name, p.JobID, subs[len(subs)-1].JobID)
		}
	}
}

// TestSlurmResumeAfterControllerCrash: the controller is killed mid-run
// and its array cancelled; --resume submits exactly the points without a
// result and the run completes.
func TestSlurmResumeAfterControllerCrash(t *testing.T) {
	cl, sc := slurmSetup(t, slurmScenario)
	out := t.TempDir()
	ctl, wait := startLabctl(t, cl.Env, "run", sc, "--out", out, "--executor", "slurm", "--slurm-labctl", labctlBin)
	var dir string
	until(t, 60*time.Second, "two points with a result", func() bool {
		ps, _ := filepath.Glob(filepath.Join(out, "*", "points", "[0-9]*"))
		if len(ps) >= 2 {
			dir = filepath.Dir(filepath.Dir(ps[0]))
			return true
		}
		return false
	})
	ctl.Process.Kill() // the controller crashes
	wait()
	for _, id := range squeue(t, cl, "-o", "%F") {
		cl.Command("scancel", id).Run()
	}
	until(t, 30*time.Second, "the array to end", func() bool { return len(squeue(t, cl, "-o", "%i")) == 0 })
	if m := readManifest(t, dir); m.Outcome != "running" {
		t.Fatalf("after the crash the manifest says %q", m.Outcome)
	}
	all := make([]int, 16)
	for i := range all {
		all[i] = i
	}
	missing := slurm.Missing(dir, all)
	if len(missing) == 0 || len(missing) == 16 {
		t.Fatalf("%d points missing after the crash: cannot test resume", len(missing))
	}
	before := len(submissions(t, dir))
	stdout, stderr, err := labctlEnv(t, t.TempDir(), cl.Env, "run", "--resume", dir)
	if err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, stdout, stderr)
	}
	subs := submissions(t, dir)
	if len(subs) <= before || subs[before].Array != slurm.IndexList(missing) {
		t.Errorf("missing %v; resume submitted %+v", missing, subs[before:])
	}
	m := readManifest(t, dir)
	if m.Outcome != "ok" || len(m.Points) != 16 {
		t.Fatalf("after resume: outcome %q, %d points", m.Outcome, len(m.Points))
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

// TestSlurmInterruptCancelsTheArray: Ctrl-C on the controller cancels the
// array and leaves the archive marked interrupted (and resumable).
func TestSlurmInterruptCancelsTheArray(t *testing.T) {
	cl, sc := slurmSetup(t, slurmScenario)
	out := t.TempDir()
	ctl, wait := startLabctl(t, cl.Env, "run", sc, "--out", out, "--executor", "slurm", "--slurm-labctl", labctlBin)
	until(t, 60*time.Second, "a running task", func() bool { return len(squeue(t, cl, "-t", "R", "-o", "%i")) > 0 })
	ctl.Process.Signal(os.Interrupt)
	stdout, stderr, err := wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v\n%s\n%s", err, stdout, stderr)
	}
	until(t, 20*time.Second, "no task left", func() bool { return len(squeue(t, cl, "-t", "PD,R", "-o", "%i")) == 0 })
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "manifest.json"))
	if len(dirs) != 1 {
		t.Fatalf("manifests %v", dirs)
	}
	m := readManifest(t, filepath.Dir(dirs[0]))
	if m.Outcome != "failed" || !strings.Contains(m.Error, "interrupted") {
		t.Errorf("manifest: outcome %q, error %q", m.Outcome, m.Error)
	}
	if len(m.Points) != 16 {
		t.Errorf("%d points recorded, want all 16 (those without a result as failed)", len(m.Points))
	}
}

// TestSlurmCapacityMatchesLocal: capacity measuring each load's points
// on Slurm measures the values a local one measures (the worker is given
// the load the search chose).
func TestSlurmCapacityMatchesLocal(t *testing.T) {
	cl, sc := slurmSetup(t, strings.Replace(strings.Replace(slurmScenario, "repetitions: 8", "repetitions: 2", 1), "matrix:\n  - path: traffic[0].load\n    values: [0.3, 0.6]\n", "", 1))
	measure := func(env []string, args ...string) []capacity.Step {
		t.Helper()
		out := t.TempDir()
		stdout, stderr := mustRun(t, env, append([]string{"capacity", sc, "--out", out, "--slo", "fct.mean<=1000000000", "--grid", "0.2,0.6"}, args...)...)
		var line struct{ Dir string }
		if err := json.Unmarshal([]byte(stdout), &line); err != nil {
			t.Fatalf("%q: %v\n%s", stdout, err, stderr)
		}
		var res capacity.Result
		b, err := os.ReadFile(filepath.Join(line.Dir, "capacity.json"))
		if err == nil {
			err = json.Unmarshal(b, &res)
		}
		if err != nil {
			t.Fatal(err)
		}
		return res.Steps
	}
	local, remote := measure(nil), measure(cl.Env, "--executor", "slurm", "--slurm-labctl", labctlBin)
	if len(local) != 2 || len(remote) != 2 {
		t.Fatalf("steps: local %+v slurm %+v", local, remote)
	}
	for i := range local {
		if local[i].Load != remote[i].Load || local[i].Value == nil || remote[i].Value == nil || *local[i].Value != *remote[i].Value {
			t.Errorf("load %g: local %s, slurm %s", local[i].Load, local[i].Measured(), remote[i].Measured())
		}
		if m := readManifest(t, remote[i].Ref); m.Executor != "slurm" {
			t.Errorf("load %g: run %s has executor %q", remote[i].Load, remote[i].Ref, m.Executor)
		}
	}
	if *local[0].Value == *local[1].Value {
		t.Errorf("loads 0.2 and 0.6 measure the same mean FCT %s: the load did not reach the points", local[0].Measured())
	}
}

// BenchmarkSlurmMatrix16 runs the 16-point matrix of tiny emulated points
// locally and as a Slurm array on the one-node test cluster (2 task
// slots), and reports each one's wall time per point: the array's figure
// less the local one is what Slurm and a lab per point add.
func BenchmarkSlurmMatrix16(b *testing.B) {
	cl := testslurm.Start(b, 2)
	sc := filepath.Join(b.TempDir(), "sl16.yaml")
	os.WriteFile(sc, []byte(slurmScenario), 0o644)
	for _, bc := range []struct {
		name string
		env  []string
		args []string
	}{{"local", nil, nil}, {"slurm", cl.Env, []string{"--executor", "slurm", "--slurm-labctl", labctlBin}}} {
		b.Run(bc.name, func(b *testing.B) {
			var total time.Duration
			for n := 0; n < b.N; n++ {
				cmd := exec.Command(labctlBin, append([]string{"run", sc, "--out", b.TempDir()}, bc.args...)...)
				cmd.Env = append(append(os.Environ(), "LABCTL_HOME="+b.TempDir(), "LABCTL_INFLUX_URL="), bc.env...)
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				total += time.Since(start)
			}
			b.ReportMetric(total.Seconds()/float64(16*b.N), "s/point")
		})
	}
}
