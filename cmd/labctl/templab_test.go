package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/labctl/labctl/lease"
)

// TestSweepTempLabs: the sweep removes a temporary lab whose owner is
// gone, key and all, and says so; it leaves one whose owner runs and a
// fresh one without an owner file or an owner in its name (an older
// labctl's). One killed before its owner file goes by the owner its name
// records. A lab removed by its own closer is gone whole.
func TestSweepTempLabs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(owner *lease.Process) string {
		t.Helper()
		dir, err := os.MkdirTemp("", tempLabPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			b, _ := json.Marshal(owner)
			putTestFile(t, filepath.Join(dir, ownerFile), string(b))
		}
		putTestFile(t, filepath.Join(dir, "keys", "id_ed25519"), "secret")
		return dir
	}
	self := lease.SelfProcess()
	other := self
	other.Cmdline = "not " + self.Cmdline // the pid now runs another command: the owner is gone
	dead, live, fresh := mk(&other), mk(&self), mk(nil)
	// Killed between its creation and its owner file: its name names the
	// owner. One of a process that is gone goes, this process's stays.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// start time 1 (no process's): were the pid reused, it is another process
	goneOwner := lease.Process{Host: self.Host, PID: gone.Process.Pid, Start: 1}
	killedEarly, err := os.MkdirTemp("", tempLabPattern(goneOwner))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := os.MkdirTemp("", tempLabPattern(self))
	if err != nil {
		t.Fatal(err)
	}

	var said []string
	sweepTempLabs(func(s string) { said = append(said, s) })
	left, _ := filepath.Glob(filepath.Join(tmp, tempLabPrefix+"*"))
	slices.Sort(left)
	want := []string{live, fresh, mine}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v (the dead owners' %s and %s removed)", left, want, dead, killedEarly)
	}
	if len(said) != 2 {
		t.Errorf("the sweep said %q, want two removals", said)
	}

	closed, err := newTempLabDir()
	if err != nil {
		t.Fatal(err)
	}
	putTestFile(t, filepath.Join(closed, "hosts", "h1", "etc", "x"), "y")
	if err := removeTempLabDir(closed); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(closed); !os.IsNotExist(err) {
		t.Errorf("the closer left %s (%v)", closed, err)
	}

	// A removal cut short (here: one entry that will not go) leaves the
	// owner file, so the next command's sweep finishes the job.
	cut, err := newTempLabDir()
	if err != nil {
		t.Fatal(err)
	}
	putTestFile(t, filepath.Join(cut, "keys", "id_ed25519"), "secret")
	stuck := errors.New("stuck")
	err = removeTempLabDirWith(cut, func(p string) error {
		if filepath.Base(p) == "keys" {
			return stuck
		}
		return os.RemoveAll(p)
	})
	if !errors.Is(err, stuck) {
		t.Errorf("removal cut short returned %v, want the entry's error", err)
	}
	if _, err := os.Stat(filepath.Join(cut, ownerFile)); err != nil {
		t.Errorf("a removal cut short lost the owner file: %v", err)
	}
}

func putTestFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
