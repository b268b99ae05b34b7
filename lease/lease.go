package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
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
	Cmdline string    `json:"cmdline,omitempty"`   // the process's command line, checked with the start time
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
	return l.Process().Gone()
}

// Process is the lease's holding process (PID 0 for a manual reservation).
func (l Lease) Process() Process {
	return Process{Host: l.Host, PID: l.PID, Start: l.PIDTime, Cmdline: l.Cmdline}
}

// Self is this process as ProcessGone judges it: host, pid and start time.
func Self() (host string, pid int, start uint64) {
	p := SelfProcess()
	return p.Host, p.PID, p.Start
}

// ProcessGone is Process{host, pid, start, ""}.Gone(): why that process no
// longer runs, "" if it still does or cannot be judged.
func ProcessGone(host string, pid int, start uint64) string {
	return Process{Host: host, PID: pid, Start: start}.Gone()
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
	p := SelfProcess()
	return Lease{Lab: lab, User: username(), Host: p.Host, Command: command, PID: p.PID, PIDTime: p.Start, Cmdline: p.Cmdline,
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
