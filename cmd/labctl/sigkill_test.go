package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

// killAt starts labctl with args (and env) and SIGKILLs it as soon as its
// progress (JSON lines on stderr) reaches stage; it returns whether the
// stage was reached and what stderr said.
func killAt(t *testing.T, home string, env []string, stage string, args ...string) (reached bool, stderr string) {
	t.Helper()
	return signalAt(t, home, env, stage, syscall.SIGKILL, args...)
}

// signalAt is killAt with another signal.
func signalAt(t *testing.T, home string, env []string, stage string, sig syscall.Signal, args ...string) (reached bool, stderr string) {
	t.Helper()
	cmd := exec.Command(labctlBin, args...)
	cmd.Env = append(append(os.Environ(), "LABCTL_HOME="+home, "LABCTL_INFLUX_URL="), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	// stage is a progress stage, or "stage|detail" for the one of that
	// name whose detail holds detail (a point's "gather" of agent results
	// and the run's "gather" share a name)
	name, detail, _ := strings.Cut(stage, "|")
	want := fmt.Sprintf(`"event":"stage","stage":%q`, name)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !reached && strings.Contains(sc.Text(), want) && strings.Contains(sc.Text(), detail) {
			reached = true
			_ = cmd.Process.Signal(sig) // SIGKILL: nothing of labctl's own runs after it
		}
	}
	_ = cmd.Wait()
	return reached, log.String()
}

// manifestStages are the stages a run's manifest records, in order.
var manifestStages = []string{"plan", "provision", "collect", "agent", "traffic", "gather", "analyse", "done"}

func stageIndex(s string) int {
	s, _, _ = strings.Cut(s, ":")
	return slices.Index(manifestStages, s)
}

// SIGKILL of 'labctl run' at every stage of its pipeline, on a temporary
// emulated lab: after the next labctl command (labctl runs) no temporary
// lab directory (with its private key) is left, no process of the run
// runs and none of its lab's endpoints listens; labctl runs marks the run
// crashed at the stage it reached (or a later one: the kill lands a few
// milliseconds after the progress line), and labctl report renders it.
func TestSIGKILLAtEveryStage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs labctl once per stage")
	}
	tmp, home := t.TempDir(), t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	dir := t.TempDir()
	qos := filepath.Join(dir, "qos.yaml")
	scen := filepath.Join(dir, "crashdrill.yaml")
	if err := os.WriteFile(qos, []byte(qosYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scen, []byte("name: crashdrill\nrepetitions: 2\nprovision: {switch_profile: qos.yaml}\n"+
		"traffic:\n  - {name: incast, pattern: incast, senders: 3, receiver: h1, bytes: 256KiB}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// progress stage -> the manifest stage the run has reached by then at least
	for _, tc := range []struct{ progress, manifest string }{
		{"reserve", ""}, // before the archive exists, or just after
		{"plan", "plan"}, {"provision", "provision"}, {"collect", "collect"}, {"agent", "agent"},
		{"schedules", "traffic"}, {"traffic", "traffic"},
		{"gather", "traffic"}, // a point's agent results
		{"gather|stopping collectors", "gather"}, {"analyse", "analyse"},
	} {
		out := t.TempDir()
		reached, stderr := killAt(t, home, env, tc.progress, "run", scen, "--lab", "leafspine:1x2:4@100", "--out", out)
		if !reached {
			t.Errorf("%s: the run never reached it:\n%s", tc.progress, stderr)
			continue
		}
		// the killed run's temporary lab (its key) is there until the next labctl command
		labDirs, _ := filepath.Glob(filepath.Join(tmp, tempLabPrefix+"*"))
		if len(labDirs) == 0 && tc.manifest != "" && stageIndex(tc.manifest) < stageIndex("gather") {
			t.Errorf("killed at %s: no temporary lab directory was left to find: the kill missed the run's lab", tc.progress)
		}
		js, errOut, err := labctlEnv(t, home, env, "runs", "--out", out, "--format", "json")
		if err != nil {
			t.Fatalf("%s: labctl runs: %v\n%s", tc.progress, err, errOut)
		}
		var runs []runEntry
		if err := json.Unmarshal([]byte(js), &runs); err == nil && len(runs) == 0 && tc.manifest == "" {
			continue // killed before it made its archive: nothing to list
		}
		if err := json.Unmarshal([]byte(js), &runs); err != nil || len(runs) != 1 {
			t.Fatalf("%s: labctl runs listed %s (%v), want the killed run", tc.progress, js, err)
		}
		r := runs[0]
		if r.Outcome != outcomeCrashed || stageIndex(r.Stage) < stageIndex(tc.manifest) {
			t.Errorf("killed at %s: labctl runs says %s at %q, want crashed at %s or later", tc.progress, r.Outcome, r.Stage, tc.manifest)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, tempLabPrefix+"*")); len(left) > 0 {
			t.Errorf("killed at %s: the next command left the temporary lab %v (and its key); what is in it: %s\nthe next command said: %q",
				tc.progress, left, labDirContents(left), errOut)
		}
		if len(labDirs) > 0 && !strings.Contains(errOut, "removed the temporary lab") {
			t.Errorf("killed at %s: the next command did not say it removed the killed run's lab: %q", tc.progress, errOut)
		}
		ours := processesOf(out, tmp)
		if len(ours) > 0 {
			t.Errorf("killed at %s: processes of the run still run: %v", tc.progress, ours)
		}
		var m reports.Manifest
		if b, err := os.ReadFile(filepath.Join(r.Dir, "manifest.json")); err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("killed at %s: manifest: %v", tc.progress, err)
		}
		if m.Lab != nil {
			for _, d := range append(switchEndpoints(m), hostEndpoints(m)...) {
				c, err := net.DialTimeout("tcp", d, 200*time.Millisecond)
				if err != nil {
					continue
				}
				c.Close()
				// the port is taken again: by a process of this run, or by
				// another lab on this busy machine that was given it since
				owner := listenerOwner(d)
				if _, mine := ours[owner]; mine {
					t.Errorf("killed at %s: %s of the killed run's lab still listens (pid %d)", tc.progress, d, owner)
				}
			}
		}
		rep, errOut, err := labctlEnv(t, home, env, "report", r.Dir, "--format", "md")
		if err != nil || !strings.Contains(rep, "crashdrill") || !strings.Contains(rep, "crashed") || !strings.Contains(errOut, "crashed at stage "+r.Stage) {
			t.Errorf("killed at %s: labctl report does not render it as crashed at %s: %v\n%s\n%s", tc.progress, r.Stage, err, rep, errOut)
		}
	}
}

func switchEndpoints(m reports.Manifest) []string {
	var out []string
	for _, s := range m.Lab.Switches {
		out = append(out, s.Mgmt.SSH, s.Mgmt.GNMI)
	}
	return out
}

func hostEndpoints(m reports.Manifest) []string {
	var out []string
	for _, h := range m.Lab.Hosts {
		out = append(out, h.Mgmt.SSH)
	}
	return out
}

// processesOf lists the processes of a run started with --out out and
// TMPDIR=tmp (both unique to it): by command line or inherited
// environment, so a child the run started counts too.
func processesOf(out, tmp string) map[int]string {
	found := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		env, _ := os.ReadFile(filepath.Join(d, "environ"))
		if strings.Contains(string(cmd), out) || bytes.Contains(env, []byte("TMPDIR="+tmp+"\x00")) {
			found[pid] = strings.ReplaceAll(string(cmd), "\x00", " ")
		}
	}
	return found
}

// listenerOwner is the pid holding the TCP socket listening on addr
// (127.0.0.1:PORT), 0 if none is found.
func listenerOwner(addr string) int {
	_, port, _ := net.SplitHostPort(addr)
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	inode := ""
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// local_address is HEXIP:HEXPORT; st 0A is LISTEN; inode is field 10
		if len(f) > 9 && strings.HasSuffix(f[1], fmt.Sprintf(":%04X", p)) && f[3] == "0A" {
			inode = f[9]
		}
	}
	if inode == "" {
		return 0
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == "socket:["+inode+"]" {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(fd))))
			return pid
		}
	}
	return 0
}

// SIGKILL of a run on a lab that is up (its lease held, its agents
// running on the hosts): the hosts run no agent of it afterwards, and the
// next run takes the dead run's lease over, saying so, and ends ok.
func TestSIGKILLOnAnUpLab(t *testing.T) {
	const lab = "leafspine:1x2:9@100" // incast sends from 16 hosts
	home := upLab(t, lab)
	out := t.TempDir()
	reached, stderr := killAt(t, home, nil, "traffic", "run", "incast", "--lab", lab, "--out", out)
	if !reached {
		t.Fatalf("the run never reached traffic:\n%s", stderr)
	}
	st, _, err := emulator.LoadState(home, lab)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(st.LabFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	defer pool.Close()
	// the agents' sessions ended with the controller's connections
	deadline := time.Now().Add(5 * time.Second)
	for _, h := range inv.Hosts {
		target, err := sshdrv.DeviceTarget(inv, h.Name, sshdrv.EndpointSSH)
		if err != nil {
			t.Fatal(err)
		}
		for {
			res, err := pool.Exec(context.Background(), target, "pgrep -f 'labctl-agent run'")
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitStatus == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s still runs the killed run's agent: %s", h.Name, res.Stdout)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	js, _, err := labctl(t, home, "runs", "--out", out, "--format", "json")
	var runs []runEntry
	if err != nil || json.Unmarshal([]byte(js), &runs) != nil || len(runs) != 1 || runs[0].Outcome != outcomeCrashed || !strings.HasPrefix(runs[0].Stage, "traffic") {
		t.Errorf("labctl runs after the kill: %v %s", err, js)
	}
	_, stderr, err = labctl(t, home, "run", "incast", "--lab", lab, "--out", out)
	if err != nil || !strings.Contains(stderr, "took over the lease of") || !strings.Contains(stderr, "is gone") {
		t.Errorf("the next run on the lab: %v\n%s", err, stderr)
	}
}

// SIGTERM (or Ctrl-C) at the traffic stage is an exit labctl controls: it
// removes its temporary lab, key and all, itself (before any other
// command), and the manifest says where the run was interrupted.
func TestSIGTERMRemovesTempLab(t *testing.T) {
	if testing.Short() {
		t.Skip("runs labctl")
	}
	tmp, home, out := t.TempDir(), t.TempDir(), t.TempDir()
	reached, stderr := signalAt(t, home, []string{"TMPDIR=" + tmp}, "traffic", syscall.SIGTERM, "run", "incast", "--out", out)
	if !reached {
		t.Fatalf("the run never reached traffic:\n%s", stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, tempLabPrefix+"*")); len(left) > 0 {
		t.Errorf("SIGTERM left the temporary lab %v", left)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "*", "manifest.json"))
	if len(runs) != 1 {
		t.Fatalf("archives %v", runs)
	}
	var m reports.Manifest
	if b, err := os.ReadFile(runs[0]); err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatal(err)
	}
	if m.Outcome != "failed" || !strings.HasPrefix(m.Stage, "traffic") || !strings.Contains(m.Error, "interrupted") {
		t.Errorf("manifest after SIGTERM: %s at %s: %s", m.Outcome, m.Stage, m.Error)
	}
}

// The leftover detectors find what they look for: a process started with
// the run's TMPDIR (as a child of labctl would inherit it), and the owner
// of a listening socket.
func TestLeftoverDetectors(t *testing.T) {
	t.Parallel()
	tmp, out := t.TempDir(), t.TempDir()
	child := exec.Command("sleep", "30")
	child.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	for i := 0; i < 100; i++ {
		if _, ok := processesOf(out, tmp)[child.Process.Pid]; ok {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := processesOf(out, tmp)[child.Process.Pid]; !ok {
		t.Errorf("processesOf does not find a process started with TMPDIR=%s", tmp)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if got := listenerOwner(lis.Addr().String()); got != os.Getpid() {
		t.Errorf("listenerOwner(%s) = %d, want this process %d", lis.Addr(), got, os.Getpid())
	}
}

// labDirContents lists what is left in temporary lab directories (their
// owner file's content included), for the failure message: which files a
// killed run left tells which step of its release it was in.
func labDirContents(dirs []string) string {
	var b strings.Builder
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || p == d {
				return nil
			}
			rel, _ := filepath.Rel(d, p)
			if e.IsDir() && strings.Count(rel, string(filepath.Separator)) >= 1 {
				fmt.Fprintf(&b, " %s/...", rel)
				return filepath.SkipDir
			}
			fmt.Fprintf(&b, " %s", rel)
			if e.Name() == ownerFile {
				o, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "=%s", o)
			}
			return nil
		})
	}
	return b.String()
}
