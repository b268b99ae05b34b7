package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/lease"
)

// holdLab takes a running lab's lease in the test process, as another
// "provision apply" on this host would; the test's end releases it.
func holdLab(t *testing.T, home, lab string) (lease.FileStore, *lease.Held) {
	t.Helper()
	store := lease.FileStore{Path: filepath.Join(emulator.StateDir(home, lab), "lease.json")}
	h, err := lease.Acquire(context.Background(), store, lab, "provision apply", lease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Release(context.Background()) })
	return store, h
}

// While another process holds a running lab, provision apply fails at
// once naming the holder and changes nothing; with --wait it waits and
// applies once the holder lets go; lab status shows the holder; lab down
// is refused too; a holder that died is taken over with a message.
func TestProvisionApplyRespectsLease(t *testing.T) {
	const lab = "leafspine:1x1:1@100"
	home := upLab(t, lab)
	qos := writeFile(t, "qos.yaml", qosYAML)
	store, h := holdLab(t, home, lab)
	ctx := context.Background()

	_, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("apply on a held lab: want exit 1, got %v\n%s", err, stderr)
	}
	if want := "is held by " + h.Lease.Owner() + " (provision apply"; !strings.Contains(stderr, want) || !strings.Contains(stderr, "expires") {
		t.Errorf("refusal %q does not name the holder (%q)", stderr, want)
	}
	if _, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--switch-profile", qos); err == nil {
		t.Error("the refused apply changed the switches")
	}
	out, _, err := labctl(t, home, "lab", "status", lab, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st []struct{ Lease *lease.Lease }
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st) != 1 || st[0].Lease == nil || st[0].Lease.Token != h.Lease.Token {
		t.Errorf("lab status does not show the holder: %v %s", err, out)
	}
	if _, stderr, err := labctl(t, home, "lab", "down", lab); err == nil || !strings.Contains(stderr, "is held by") {
		t.Errorf("lab down of a held lab: %v %s", err, stderr)
	}

	go func() { time.Sleep(time.Second); h.Release(ctx) }()
	start := time.Now()
	_, stderr, err = labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos, "--wait", "30s")
	if err != nil {
		t.Fatalf("apply --wait: %v\n%s", err, stderr)
	}
	if w := time.Since(start); w < 900*time.Millisecond || !strings.Contains(stderr, "waiting up to") {
		t.Errorf("apply --wait ran after %s, stderr %q: it did not wait for the holder", w, stderr)
	}
	if _, stderr, err := labctl(t, home, "provision", "verify", "--lab", lab, "--switch-profile", qos); err != nil {
		t.Errorf("after apply --wait: %v %s", err, stderr)
	}
	if _, ok, _ := store.Read(ctx); ok {
		t.Error("apply left its lease behind")
	}

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := lease.New(lab, "run incast", time.Hour)
	gone.PID, gone.PIDTime = dead.Process.Pid, 1
	if _, err := store.Take(ctx, gone); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos)
	if err != nil || !strings.Contains(stderr, "took over the lease of "+gone.Owner()) || !strings.Contains(stderr, "is gone") {
		t.Errorf("apply over a dead holder: %v %q", err, stderr)
	}
}

// Two applies of different profiles started together on one lab: never
// both succeed while overlapping. Either one is refused naming the other
// ("provision apply"), or they ran one after the other and the lab holds
// one of the two profiles whole.
func TestConcurrentProvisionApply(t *testing.T) {
	const lab = "leafspine:1x2:1@100"
	home := upLab(t, lab)
	profiles := []string{
		writeFile(t, "a.yaml", qosYAML),
		writeFile(t, "b.yaml", "pfc_priorities: [3, 4]\nxoff_bytes: 131072\nxon_bytes: 98304\n"),
	}
	for round := 0; round < 5; round++ {
		type result struct {
			err    error
			stderr string
		}
		res := make(chan result, 2)
		for _, p := range profiles {
			go func() {
				_, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", p)
				res <- result{err, stderr}
			}()
		}
		ok := 0
		for i := 0; i < 2; i++ {
			r := <-res
			switch {
			case r.err == nil:
				ok++
			case !strings.Contains(r.stderr, "is held by") || !strings.Contains(r.stderr, "(provision apply"):
				t.Fatalf("round %d: apply failed for another reason: %v\n%s", round, r.err, r.stderr)
			}
		}
		if ok == 0 {
			t.Fatalf("round %d: both applies refused", round)
		}
		whole := 0
		for _, p := range profiles {
			if _, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--switch-profile", p); err == nil {
				whole++
			}
		}
		if whole != 1 {
			t.Fatalf("round %d: the lab matches %d of the two profiles, want exactly one whole", round, whole)
		}
	}
}

// A run on a lab another process holds is refused naming the holder
// before it creates a run directory; with --wait it runs once the lab is
// free. Its progress records the reserve stage.
func TestRunRespectsLease(t *testing.T) {
	const lab = "leafspine:1x2:9@100"
	home := upLab(t, lab)
	store, h := holdLab(t, home, lab)
	ctx := context.Background()
	out := t.TempDir()
	_, stderr, err := labctl(t, home, "run", "incast", "--lab", lab, "--out", out)
	if err == nil || !strings.Contains(stderr, `"stage":"reserve"`) || !strings.Contains(stderr, "is held by "+h.Lease.Owner()+" (provision apply") {
		t.Fatalf("run on a held lab: %v\n%s", err, stderr)
	}
	if runs, _ := filepath.Glob(filepath.Join(out, "*")); len(runs) != 0 {
		t.Errorf("the refused run created %v", runs)
	}
	go func() { time.Sleep(time.Second); h.Release(ctx) }()
	if _, stderr, err := labctl(t, home, "run", "incast", "--lab", lab, "--out", out, "--wait", "1m"); err != nil || !strings.Contains(stderr, "waiting up to") {
		t.Fatalf("run --wait: %v\n%s", err, stderr)
	}
	if _, ok, _ := store.Read(ctx); ok {
		t.Error("the run left its lease behind")
	}
}

// A hardware lab file keeps its lease beside it (LAB.lease): a
// reservation shows in lab status; another user's reservation refuses
// provision apply before any device is touched and is released only with
// --force; the reserving user's own commands pass.
func TestReserveHardwareLab(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	labFile := hardwareLabFile(t)
	if out, stderr, err := labctl(t, home, "lab", "reserve", labFile, "--for", "1h", "--note", "headroom sweep"); err != nil || !strings.Contains(out, "reserved by") {
		t.Fatalf("reserve: %v %s %s", err, out, stderr)
	}
	out, _, err := labctl(t, home, "lab", "status", labFile)
	if err != nil || !strings.Contains(out, "is held by") || !strings.Contains(out, `"headroom sweep"`) {
		t.Fatalf("status of a reserved hardware lab: %v %q", err, out)
	}
	store := lease.FileStore{Path: labFile + ".lease"}
	mine, ok, err := store.Read(context.Background())
	if err != nil || !ok || !mine.Manual {
		t.Fatalf("no reservation beside the lab file: %v %+v", err, mine)
	}
	if _, stderr, err := labctl(t, home, "lab", "reserve", labFile, "--for", "2h"); err != nil {
		t.Fatalf("extending my own reservation: %v %s", err, stderr)
	}
	if again, _, _ := store.Read(context.Background()); !again.Expires.After(mine.Expires.Add(50*time.Minute)) || again.Token != mine.Token {
		t.Errorf("reserve --for 2h did not extend my reservation: %+v then %+v", mine, again)
	}
	if _, _, err := labctl(t, home, "lab", "release", labFile); err != nil {
		t.Fatalf("release of my own reservation: %v", err)
	}
	alice := mine
	alice.User, alice.Token = "alice", "alice-1"
	if _, err := store.Take(context.Background(), alice); err != nil {
		t.Fatal(err)
	}
	qos := writeFile(t, "qos.yaml", qosYAML)
	start := time.Now()
	_, stderr, err := labctl(t, home, "provision", "apply", "--lab", labFile, "--switch-profile", qos)
	if err == nil || !strings.Contains(stderr, "is held by alice@") || !strings.Contains(stderr, "lab reserve") {
		t.Errorf("apply under alice's reservation: %v %q", err, stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusal took %s: it reached for the devices", d)
	}
	if _, _, err := labctl(t, home, "lab", "release", labFile); err == nil {
		t.Error("released alice's reservation without --force")
	}
	if out, _, err := labctl(t, home, "lab", "release", labFile, "--force"); err != nil || !strings.Contains(out, "was held by alice@") {
		t.Errorf("release --force: %v %q", err, out)
	}
	if _, ok, _ := store.Read(context.Background()); ok {
		t.Error("lease still there after release --force")
	}
}

// Two runs on one running lab: while the first holds it the second is
// refused naming it ("run incast"); with --wait the second runs after
// the first, which ends ok, and whose per-flow results (every flow's
// size, endpoints, status and FCT) equal those of the same scenario run
// alone on the lab afterwards: the second run changed nothing under it.
func TestConcurrentRuns(t *testing.T) {
	const lab = "leafspine:1x2:9@100"
	home := upLab(t, lab)
	// long enough (20 points) that the second run starts while the first holds the lab
	scen := writeFile(t, "incast.yaml", "name: incast\nrepetitions: 20\ntraffic:\n  - {name: incast, pattern: incast, senders: 3, receiver: h1, bytes: 512KiB}\n")
	store := lease.FileStore{Path: filepath.Join(emulator.StateDir(home, lab), "lease.json")}
	out := t.TempDir()
	first := make(chan error, 1)
	go func() {
		_, stderr, err := labctl(t, home, "run", scen, "--lab", lab, "--out", out)
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, stderr)
		}
		first <- err
	}()
	var held lease.Lease
	for deadline := time.Now().Add(30 * time.Second); held.Command == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first run never held the lab")
		}
		if l, ok, _ := store.Read(context.Background()); ok {
			held = l
		}
	}
	_, stderr, err := labctl(t, home, "run", "incast", "--lab", lab, "--out", out)
	if err == nil || !strings.Contains(stderr, "is held by "+held.Owner()+" (run incast, pid "+fmt.Sprint(held.PID)) {
		t.Errorf("second run while the first holds the lab: %v\n%s", err, stderr)
	}
	_, stderr, err = labctl(t, home, "run", "incast", "--lab", lab, "--out", out, "--wait", "2m")
	if err != nil {
		t.Errorf("second run with --wait: %v\n%s", err, stderr)
	}
	if err := <-first; err != nil {
		t.Fatalf("first run: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "incast-*"))
	if len(runs) != 2 {
		t.Fatalf("runs %v, want the first and the waiting one", runs)
	}
	alone := t.TempDir()
	if _, stderr, err := labctl(t, home, "run", scen, "--lab", lab, "--out", alone); err != nil {
		t.Fatalf("the scenario alone: %v\n%s", err, stderr)
	}
	aloneRuns, _ := filepath.Glob(filepath.Join(alone, "incast-*"))
	var firstDir string // the first run: the one that started first
	for _, d := range runs {
		if firstDir == "" || filepath.Base(d) < filepath.Base(firstDir) {
			firstDir = d
		}
	}
	got, want := perFlow(t, firstDir), perFlow(t, aloneRuns[0])
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the first run's per-flow results differ from the same run alone (%d vs %d flows)\nwith a waiting run: %.6v\nalone: %.6v", len(got), len(want), got, want)
	}
}

// perFlow is a run's flows.csv without its run id and wall-clock times:
// point, flow, endpoints, size, FCT and status, sorted.
func perFlow(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows[1:] { // run,point,flow_id,group,step,src,dst,size,start_ns,end_ns,fct_ns,status,tool
		out = append(out, strings.Join([]string{r[1], r[2], r[5], r[6], r[7], r[10], r[11]}, ","))
	}
	slices.Sort(out)
	return out
}

// hardwareLabFile is a copy of the example hardware lab file in a
// directory of the test's own (its lease goes beside it).
func hardwareLabFile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../inventory/testdata/example-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "lab.yaml", string(src))
}
