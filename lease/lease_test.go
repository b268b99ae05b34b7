package lease

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func store(t *testing.T) FileStore {
	return FileStore{Path: filepath.Join(t.TempDir(), "lab", "lease.json")}
}

// Many takers at once: exactly one wins, the others are told who holds it.
func TestTakeExactlyOneWins(t *testing.T) {
	t.Parallel()
	s := store(t)
	const n = 16
	var wins, refused int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Take(context.Background(), New("lab1", "provision apply", time.Minute))
			var held *HeldError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.As(err, &held):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || refused != n-1 {
		t.Fatalf("wins %d refused %d, want 1 and %d", wins, refused, n-1)
	}
}

// A lease whose process is gone, or whose pid now runs another process,
// or that expired, is taken over and the taker learns whose it was.
func TestTakeOverStale(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := New("lab1", "run incast", time.Minute)
	recycled := self
	recycled.PIDTime++
	expired := self
	expired.PID = 0
	expired.Expires = time.Now().Add(-time.Second)
	goneL := self
	goneL.PID, goneL.PIDTime = dead.Process.Pid, 1
	for name, tc := range map[string]struct {
		old  Lease
		want string
	}{
		"dead pid":     {goneL, "is gone"},
		"recycled pid": {recycled, "another process"},
		"expired":      {expired, "expired"},
	} {
		t.Run(name, func(t *testing.T) {
			s := store(t)
			tc.old.Token = "old"
			if _, err := s.Take(context.Background(), tc.old); err != nil {
				t.Fatal(err)
			}
			var msgs []string
			h, err := Acquire(context.Background(), s, "lab1", "provision apply", Options{Notify: func(m string) { msgs = append(msgs, m) }})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release(context.Background())
			if len(msgs) != 1 || !strings.Contains(msgs[0], "took over the lease of "+tc.old.Owner()) || !strings.Contains(msgs[0], tc.want) {
				t.Errorf("messages %q, want a takeover naming %s and %q", msgs, tc.old.Owner(), tc.want)
			}
			if got, _, _ := s.Read(context.Background()); got.Token != h.Lease.Token {
				t.Errorf("store holds %+v, want the new lease", got)
			}
		})
	}
}

// A live holder of another process is not taken over: Acquire fails at
// once naming it, or waits and wins once it is released.
func TestHeldFailsOrWaits(t *testing.T) {
	t.Parallel()
	s := store(t)
	other := New("lab1", "run incast", time.Minute)
	other.User, other.Host, other.PID = "alice", "ctl-2", 0 // another host: judged by expiry
	if _, err := s.Take(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(context.Background(), s, "lab1", "lab down", Options{})
	var held *HeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "alice@ctl-2 (run incast)") || !strings.Contains(err.Error(), "expires") {
		t.Fatalf("err %v, want held by alice@ctl-2 (run incast)", err)
	}
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = s.Release(context.Background(), other)
	}()
	start := time.Now()
	h, err := Acquire(context.Background(), s, "lab1", "lab down", Options{Wait: 5 * time.Second, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if w := time.Since(start); w < 100*time.Millisecond {
		t.Errorf("took the lab after %s, before its holder released it", w)
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Read(context.Background()); ok {
		t.Error("lease still stored after release")
	}
}

// Renewal keeps a lease alive well past its TTL; after Release another
// process's Take succeeds at once.
func TestRenewKeepsAlive(t *testing.T) {
	t.Parallel()
	s := store(t)
	const ttl = 150 * time.Millisecond
	h, err := Acquire(context.Background(), s, "lab1", "run incast", Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * ttl)
	other := New("lab1", "provision apply", time.Minute)
	other.Host, other.PID = "ctl-2", 0
	if _, err := s.Take(context.Background(), other); err == nil {
		t.Fatal("took a renewed lease after 4 TTLs")
	}
	if err := h.Err(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), other); err != nil {
		t.Fatalf("take after release: %v", err)
	}
}

// Without renewal the lease expires after its TTL and is taken over.
func TestExpiry(t *testing.T) {
	t.Parallel()
	s := store(t)
	l := New("lab1", "run incast", 100*time.Millisecond)
	l.Host = "ctl-2"
	if _, err := s.Take(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	other := New("lab1", "lab down", time.Minute)
	if _, err := s.Take(context.Background(), other); err == nil {
		t.Fatal("took a live lease")
	}
	time.Sleep(150 * time.Millisecond)
	replaced, err := s.Take(context.Background(), other)
	if err != nil || replaced == nil || replaced.Token != l.Token {
		t.Fatalf("take after expiry: %v, replaced %+v", err, replaced)
	}
	if err := s.Renew(context.Background(), l); !errors.Is(err, ErrLost) {
		t.Errorf("renew of a taken-over lease: %v, want ErrLost", err)
	}
}

// A manual reservation lets its own user's commands through, not others'.
func TestManualReservation(t *testing.T) {
	t.Parallel()
	s := store(t)
	r := New("lab1", "lab reserve", time.Hour)
	r.PID, r.PIDTime, r.Manual = 0, 0, true
	if _, err := s.Take(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	h, err := Acquire(context.Background(), s, "lab1", "provision apply", Options{})
	if err != nil {
		t.Fatalf("owner's command refused under its own reservation: %v", err)
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s.Read(context.Background()); !ok || got.Token != r.Token {
		t.Fatal("the command's release removed the reservation")
	}
	r2 := r
	r2.User, r2.Token = "alice", "t2"
	if err := os.Remove(s.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), r2); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), s, "lab1", "provision apply", Options{}); err == nil {
		t.Fatal("another user's command ran under alice's reservation")
	}
}

// One judge for every recorded process: a live one (this test) runs; the
// same pid with another start time or another command line is another
// process now, and Signal refuses to send it anything; a pid recorded
// with neither is never signalled.
func TestProcessIdentity(t *testing.T) {
	t.Parallel()
	self := SelfProcess()
	if self.Start == 0 || self.Cmdline == "" {
		t.Fatalf("SelfProcess %+v lacks start time or command line", self)
	}
	if why := self.Gone(); why != "" {
		t.Fatalf("this process judged gone: %s", why)
	}
	otherStart, otherCmd, bare := self, self, self
	otherStart.Start++
	otherCmd.Cmdline += " --not-me"
	bare.Start, bare.Cmdline = 0, ""
	for name, p := range map[string]Process{"start time": otherStart, "command line": otherCmd} {
		if why := p.Gone(); !strings.Contains(why, "another process") {
			t.Errorf("%s differs: Gone %q, want another process", name, why)
		}
		// SIGKILL would end this test if Signal sent it
		if err := p.Signal(syscall.SIGKILL); err == nil || !strings.Contains(err.Error(), "not signalled") {
			t.Errorf("%s differs: Signal %v, want a refusal", name, err)
		}
	}
	if err := bare.Signal(syscall.SIGKILL); !errors.Is(err, ErrUnverified) {
		t.Errorf("a pid without start time or command line: Signal %v, want ErrUnverified", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := Process{Host: self.Host, PID: dead.Process.Pid, Start: 1}
	if why := gone.Gone(); !strings.Contains(why, "is gone") && !strings.Contains(why, "another process") {
		t.Errorf("an exited process: Gone %q", why)
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	z := Process{Host: self.Host, PID: zombie.Process.Pid}
	for i := 0; i < 100; i++ { // exited, not reaped: its /proc entry stays
		if state, st, err := procStat(z.PID); err == nil && state == 'Z' {
			z.Start = st
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if why := z.Gone(); z.Start == 0 || !strings.Contains(why, "has exited") {
		t.Errorf("an exited, unreaped child: Gone %q", why)
	}
	zombie.Wait()
	if err := self.Signal(0); err != nil {
		t.Errorf("signal 0 to this very process: %v", err)
	}
	l := New("lab1", "run", time.Minute)
	if l.Process() != self {
		t.Errorf("a new lease names %+v, want this process %+v", l.Process(), self)
	}
}
