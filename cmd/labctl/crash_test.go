package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/lease"
)

// labctlEnv runs labctl with extra environment (e.g. its own TMPDIR).
func labctlEnv(t *testing.T, home string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(labctlBin, args...)
	cmd.Env = append(append(os.Environ(), "LABCTL_HOME="+home, "LABCTL_INFLUX_URL="), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// A temporary lab left by a killed command (its owner process gone) is
// removed, key and all, by the next labctl command; one whose owner still
// runs (this test) and another user's are left alone.
func TestNextCommandRemovesAbandonedTempLab(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := lease.SelfProcess()
	mk := func(owner *lease.Process) string {
		dir, err := os.MkdirTemp(tmp, tempLabPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keys", "id_ed25519"), []byte("PRIVATE"), 0o600); err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			b, _ := json.Marshal(owner)
			if err := os.WriteFile(filepath.Join(dir, ownerFile), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	crashed := mk(&lease.Process{Host: self.Host, PID: dead.Process.Pid, Start: 1, Cmdline: "labctl run incast"})
	live := mk(&self)
	fresh := mk(nil) // being created: no owner file yet
	_, stderr, err := labctlEnv(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "runs", "--out", t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("the crashed command's temporary lab %s (with its key) is still there", crashed)
	}
	if !strings.Contains(stderr, "removed the temporary lab "+crashed) {
		t.Errorf("the removal was not said: %q", stderr)
	}
	for _, d := range []string{live, fresh} {
		if _, err := os.Stat(filepath.Join(d, "keys", "id_ed25519")); err != nil {
			t.Errorf("a temporary lab in use was touched: %v", err)
		}
	}
}

// lab down signals the lab's own process only: a state whose pid now
// runs a stranger (another command line) is cleared as a crashed lab's
// and the stranger lives; a state that cannot tell (no start time or
// command line recorded) is refused and stays; the lab's real process is
// stopped.
func TestLabDownNeverSignalsAStranger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	stranger := exec.Command("sleep", "30")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stranger.Process.Kill(); stranger.Wait() })
	time.Sleep(50 * time.Millisecond) // its /proc entry is the sleep's, not the fork's
	real := lease.Process{Host: lease.SelfProcess().Host, PID: stranger.Process.Pid}
	for i := 0; i < 50 && real.Cmdline != "sleep 30"; i++ {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(real.PID), "cmdline"))
		real.Cmdline = strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")
		time.Sleep(20 * time.Millisecond)
	}
	save := func(name string, p lease.Process) string {
		dir := emulator.StateDir(home, name)
		if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
			t.Fatal(err)
		}
		st := emulator.State{Name: name, Host: p.Host, PID: p.PID, PIDStart: p.Start, Cmdline: p.Cmdline, Dir: dir}
		if err := emulator.SaveState(st); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	recycled := real
	recycled.Cmdline = "labctl lab serve --engine packet leafspine:1x1:1@100"
	save("recycled", recycled)
	out, stderr, err := labctl(t, home, "lab", "down", "recycled")
	if err != nil || !strings.Contains(out, "was not running (pid "+strconv.Itoa(real.PID)+" is another process") {
		t.Errorf("lab down of a lab whose pid runs a stranger: %v %q %q", err, out, stderr)
	}
	if _, ok, _ := emulator.LoadState(home, "recycled"); ok {
		t.Error("the crashed lab's state stays")
	}
	// The same for a script: was_running false, and the note says why.
	save("recycled-json", recycled)
	out, stderr, err = labctl(t, home, "lab", "down", "recycled-json", "--format", "json")
	var downs []labDown
	if err != nil || json.Unmarshal([]byte(out), &downs) != nil || len(downs) != 1 {
		t.Fatalf("lab down --format json of a lab whose process had gone: %v %q %q", err, out, stderr)
	}
	if d := downs[0]; d.Lab != "recycled-json" || d.WasRunning || !strings.Contains(d.Note, "is another process") {
		t.Errorf("lab down --format json of a lab whose process had gone: %+v", d)
	}
	if _, ok, _ := emulator.LoadState(home, "recycled-json"); ok {
		t.Error("the crashed lab's state stays (--format json)")
	}
	unknown := real
	unknown.Start, unknown.Cmdline = 0, ""
	dir := save("legacy", unknown)
	if _, stderr, err := labctl(t, home, "lab", "down", "legacy"); err == nil || !strings.Contains(stderr, "cannot tell it from another process") {
		t.Errorf("lab down of a pid it cannot verify: %v %q", err, stderr)
	}
	if _, ok, _ := emulator.LoadState(home, "legacy"); !ok {
		t.Errorf("the state of %s was forgotten though its process could not be stopped", dir)
	}
	if syscall.Kill(stranger.Process.Pid, 0) != nil {
		t.Fatal("lab down signalled the stranger")
	}
	save("real", real)
	if _, stderr, err := labctl(t, home, "lab", "down", "real"); err != nil {
		t.Fatalf("lab down of the lab's own process: %v %s", err, stderr)
	}
	done := make(chan error, 1)
	go func() { done <- stranger.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("lab down did not stop the lab's own process")
	}
	if _, err := os.Stat(filepath.Join(emulator.StateDir(home, "real"), "keys")); !os.IsNotExist(err) {
		t.Errorf("lab down left the lab's keys: %v", err)
	}
}
