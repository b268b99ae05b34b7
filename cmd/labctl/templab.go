package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
// the next labctl command removes it once that process is gone. Its name
// names the owner too (pid, start time and host), so a directory killed
// in the instant between its creation and its owner file is not left
// ownerless.

const tempLabPrefix = "labctl-lab-"

// ownerFile names the process that owns a temporary lab directory.
const ownerFile = "owner.json"

// newTempLabDir makes a temporary lab's 0700 directory owned by this
// process.
func newTempLabDir() (string, error) {
	self := lease.SelfProcess()
	dir, err := os.MkdirTemp("", tempLabPattern(self)) // 0700
	if err != nil {
		return "", fmt.Errorf("temporary lab: %w", err)
	}
	b, _ := json.Marshal(self)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), b, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("temporary lab: %w", err)
	}
	return dir, nil
}

// tempLabPattern is the name (os.MkdirTemp's pattern: a random number
// follows) of a temporary lab directory that p owns.
func tempLabPattern(p lease.Process) string {
	return fmt.Sprintf("%sp%d-s%d-h%s-", tempLabPrefix, p.PID, p.Start, nameSafe(p.Host))
}

// tempLabName parses a temporary lab directory's name as tempLabPattern
// makes it (older labctl versions made names without an owner).
var tempLabName = regexp.MustCompile(`^` + tempLabPrefix + `p([0-9]+)-s([0-9]+)-h(.*)-[0-9]+$`)

// ownerFromName is the owner a temporary lab directory's name records:
// pid and start time, on this host (a name of another host's, or of an
// older version, records none).
func ownerFromName(dir string) (lease.Process, bool) {
	m := tempLabName.FindStringSubmatch(filepath.Base(dir))
	self := lease.SelfProcess()
	if m == nil || m[3] != nameSafe(self.Host) {
		return lease.Process{}, false
	}
	pid, err1 := strconv.Atoi(m[1])
	start, err2 := strconv.ParseUint(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return lease.Process{}, false
	}
	return lease.Process{Host: self.Host, PID: pid, Start: start}, true
}

// nameSafe keeps a host name's letters, digits, dots and dashes (a file
// name must not hold a separator).
func nameSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
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

// ownerless is how long a temporary lab directory that records no owner
// (neither an owner file nor a name that names one: an older labctl's)
// is left alone: it may be a running older labctl's.
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
	if err != nil { // killed before its owner file, or an older version's
		if p, ok := ownerFromName(dir); ok {
			return p.Gone()
		}
		if time.Since(fi.ModTime()) > ownerless {
			return "no owner recorded"
		}
		return ""
	}
	return owner.Gone() // "" for another host's (its own labctl cleans it)
}
