package lease

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Lease is who holds a lab and until when.
type Lease struct {
	Lab     string    `json:"lab"`
	User    string    `json:"user"`
	Host    string    `json:"host"`
	Command string    `json:"command"`
	PID     int       `json:"pid,omitempty"`       // 0 for a manual reservation
	PIDTime uint64    `json:"pid_start,omitempty"` // the process's start time (clock ticks since boot), so a recycled pid is not taken for the holder
	Manual  bool      `json:"manual,omitempty"`    // 'labctl lab reserve': held until Expires, not renewed
	Note    string    `json:"note,omitempty"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Token   string    `json:"token"` // names this holding: renew and release act only on their own
}

// Owner is user@host.
func (l Lease) Owner() string { return l.User + "@" + l.Host }

func (l Lease) String() string {
	s := fmt.Sprintf("%s (%s", l.Owner(), l.Command)
	if l.PID > 0 {
		s += fmt.Sprintf(", pid %d", l.PID)
	}
	s += fmt.Sprintf(") since %s, expires %s", l.Since.Format(time.RFC3339), l.Expires.Format(time.RFC3339))
	if l.Note != "" {
		s += fmt.Sprintf(", note %q", l.Note)
	}
	return s
}

// Stale says why a lease no longer holds its lab ("" if it still does):
// it expired, or its process, on this host, is gone or is another one.
// A process on another host is judged by expiry alone.
func (l Lease) Stale(now time.Time) string {
	if !now.Before(l.Expires) {
		return "expired " + l.Expires.Format(time.RFC3339)
	}
	return ProcessGone(l.Host, l.PID, l.PIDTime)
}

// Self is this process as ProcessGone judges it: host, pid and start time.
func Self() (host string, pid int, start uint64) {
	pid = os.Getpid()
	start, _ = procStart(pid)
	return hostname(), pid, start
}

// ProcessGone says why the process pid of host, started at start (field
// 22 of /proc/PID/stat; 0: unknown), no longer runs ("" if it still runs,
// or cannot be judged: no pid, or another host). A recycled pid runs
// another process, with another start time.
func ProcessGone(host string, pid int, start uint64) string {
	if pid <= 0 || host != hostname() {
		return ""
	}
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return fmt.Sprintf("pid %d is gone", pid)
	}
	if st, err := procStart(pid); err == nil && start != 0 && st != start {
		return fmt.Sprintf("pid %d is another process now", pid)
	}
	return ""
}

// SameProcess reports whether two leases were made by one process.
func (l Lease) SameProcess(o Lease) bool {
	return l.PID > 0 && l.PID == o.PID && l.PIDTime == o.PIDTime && l.Host == o.Host
}

// HeldError is a refusal: the lab is held by another.
type HeldError struct{ Holder Lease }

func (e *HeldError) Error() string {
	return fmt.Sprintf("lab %s is held by %s", e.Holder.Lab, e.Holder)
}

// ErrLost says a renew or release found the lease no longer ours (taken
// over after it expired, or released with --force).
var ErrLost = errors.New("lease lost")

// Store keeps one lab's lease. Take installs l unless a live lease of
// another holds the lab (a *HeldError); it returns the stale lease it
// replaced, if any. Renew moves the expiry of the lease with l's token,
// Release removes it; both return ErrLost if the lease is not l's.
type Store interface {
	Take(ctx context.Context, l Lease) (replaced *Lease, err error)
	Renew(ctx context.Context, l Lease) error
	Release(ctx context.Context, l Lease) error
	Read(ctx context.Context) (Lease, bool, error)
}

// New is a lease of lab for command by this process, valid for ttl.
func New(lab, command string, ttl time.Duration) Lease {
	now := time.Now().UTC().Truncate(time.Millisecond)
	host, pid, st := Self()
	return Lease{Lab: lab, User: username(), Host: host, Command: command, PID: pid, PIDTime: st,
		Since: now, Expires: now.Add(ttl), Token: token()}
}

func username() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func token() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// procStart is field 22 of /proc/PID/stat: the process's start time in
// clock ticks after boot, which differs for a recycled pid.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// the command name (field 2) may hold spaces: count from its ')'
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}
