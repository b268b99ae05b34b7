package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/labctl/labctl/lease"
)

// A temporary lab (one a single command starts and stops, e.g. 'labctl run
// incast' without a lab up) keeps its private key, known_hosts and device
// trees in a 0700 directory under the temporary directory, removed by the
// command's closer on every exit path it controls (success, error,
// SIGINT/SIGTERM). A SIGKILL or a crash cannot run it: the directory then
// names its owner (owner.json: host, pid, start time, command line) and
// the next labctl command removes it once that process is gone.

const tempLabPrefix = "labctl-lab-"

// ownerFile names the process that owns a temporary lab directory.
const ownerFile = "owner.json"

// newTempLabDir makes a temporary lab's 0700 directory owned by this
// process.
func newTempLabDir() (string, error) {
	dir, err := os.MkdirTemp("", tempLabPrefix) // 0700
	if err != nil {
		return "", fmt.Errorf("temporary lab: %w", err)
	}
	b, _ := json.Marshal(lease.SelfProcess())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), b, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("temporary lab: %w", err)
	}
	return dir, nil
}

// removeTempLabDir removes a temporary lab directory, its owner file
// last: a removal cut short (a SIGKILL, a file a closing server still
// writes) leaves the owner named, so the next command's sweep finishes it
// instead of leaving the key for a day as ownerless.
func removeTempLabDir(dir string) error { return removeTempLabDirWith(dir, os.RemoveAll) }

// removeTempLabDirWith is removeTempLabDir removing each entry with
// removeAll (a test's, to fail one).
func removeTempLabDirWith(dir string, removeAll func(string) error) error {
	ents, _ := os.ReadDir(dir)
	var errs []error
	for _, e := range ents {
		if e.Name() != ownerFile {
			errs = append(errs, removeAll(filepath.Join(dir, e.Name())))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("temporary lab %s: %w", dir, err)
	}
	return os.RemoveAll(dir)
}

// ownerless is how long a temporary lab directory without a readable
// owner file is left alone (it may be in the instant between its
// creation and its owner file, or be a running older labctl's).
// Directories of labctl versions before owner files are left a day.
const ownerless = 24 * time.Hour

// sweepTempLabs removes the temporary lab directories of this user whose
// owner process is gone (crashed or killed), and says which.
func sweepTempLabs(say func(string)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempLabPrefix+"*"))
	for _, dir := range dirs {
		if why := abandoned(dir); why != "" {
			if err := removeTempLabDir(dir); err == nil {
				say(fmt.Sprintf("removed the temporary lab %s left by a crashed command (%s)", dir, why))
			}
		}
	}
}

// abandoned says why dir is a temporary lab nobody owns any more ("" if
// it is owned, or not this user's to remove).
func abandoned(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return ""
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	var owner lease.Process
	if err == nil {
		err = json.Unmarshal(b, &owner)
	}
	switch {
	case err != nil:
		if time.Since(fi.ModTime()) > ownerless {
			return "no owner recorded"
		}
		return ""
	}
	return owner.Gone() // "" for another host's (its own labctl cleans it)
}
