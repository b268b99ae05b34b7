package lease

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Process names one process well enough never to take another for it:
// its host, pid, start time (field 22 of /proc/PID/stat, clock ticks after
// boot: a recycled pid has another) and command line. Every check of a
// recorded process (a lease's holder, a lab's server, a run's controller)
// goes through Gone, and every signal to one through Signal, so that no
// two of them can disagree about a recycled pid or another user's process.
type Process struct {
	Host    string `json:"host,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Start   uint64 `json:"pid_start,omitempty"`
	Cmdline string `json:"cmdline,omitempty"` // argv joined by spaces
}

// SelfProcess is this process.
func SelfProcess() Process {
	pid := os.Getpid()
	p := Process{Host: hostname(), PID: pid}
	p.Start, _ = procStart(pid)
	p.Cmdline, _ = procCmdline(pid)
	return p
}

// Gone says why p no longer runs ("" if it still runs, or cannot be
// judged: no pid, or another host, where only a lease's expiry can tell).
// A pid that exists but started at another time, or runs another command
// line, is another process now. A process of another user counts as
// running when its start time and command line match (kill(pid, 0) would
// say EPERM, not that it is gone).
func (p Process) Gone() string {
	if p.PID <= 0 || p.Host != hostname() {
		return ""
	}
	state, st, err := procStat(p.PID)
	if err != nil {
		if syscall.Kill(p.PID, 0) == syscall.ESRCH || errors.Is(err, os.ErrNotExist) {
			return fmt.Sprintf("pid %d is gone", p.PID)
		}
		return "" // no /proc to read: running as far as we can tell
	}
	if state == 'Z' || state == 'X' {
		return fmt.Sprintf("pid %d has exited (its parent has not reaped it yet)", p.PID)
	}
	if p.Start != 0 && st != p.Start {
		return fmt.Sprintf("pid %d is another process now (started at %d, not %d)", p.PID, st, p.Start)
	}
	if p.Cmdline != "" {
		if cmd, err := procCmdline(p.PID); err == nil && cmd != p.Cmdline {
			return fmt.Sprintf("pid %d is another process now (%q, not %q)", p.PID, cmd, p.Cmdline)
		}
	}
	return ""
}

// ErrUnverified refuses to signal a process recorded without a start time
// or command line: nothing would tell it from a stranger with its pid.
var ErrUnverified = errors.New("recorded without start time or command line: cannot tell it from another process with its pid")

// Signal sends sig to p if, and only if, p is still that process (Gone
// says ""), on this host. It never signals a stranger that took p's pid.
func (p Process) Signal(sig syscall.Signal) error {
	switch {
	case p.PID <= 0:
		return fmt.Errorf("pid %d: no process", p.PID)
	case p.Host != hostname():
		return fmt.Errorf("pid %d runs on %s, not this host (%s)", p.PID, p.Host, hostname())
	case p.Start == 0 && p.Cmdline == "":
		return fmt.Errorf("pid %d: %w", p.PID, ErrUnverified)
	}
	if why := p.Gone(); why != "" {
		return fmt.Errorf("not signalled: %s", why)
	}
	if err := syscall.Kill(p.PID, sig); err != nil {
		return fmt.Errorf("pid %d: %w", p.PID, err)
	}
	return nil
}

// procStart is field 22 of /proc/PID/stat: the process's start time in
// clock ticks after boot, which differs for a recycled pid.
func procStart(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

// procStat reads the process's state (field 3: R, S, Z ...) and start
// time (field 22) from /proc/PID/stat.
func procStat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// the command name (field 2) may hold spaces: count from its ')'
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return f[0][0], start, err
}

// procCmdline is /proc/PID/cmdline with its NULs as spaces.
func procCmdline(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", err
	}
	return string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})), nil
}
