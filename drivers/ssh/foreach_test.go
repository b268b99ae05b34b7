package ssh_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

func TestForEachBoundsParallelism(t *testing.T) {
	const maxParallel = 3
	d := newDevice(t, sshdrv.Config{MaxParallel: maxParallel}, nil)
	var targets []sshdrv.Target
	for i := range 12 { // 12 devices (same server, separate connections)
		tg := d.target
		tg.Name = fmt.Sprintf("h%d", i)
		targets = append(targets, tg)
	}
	done := make(chan error, 1)
	go func() {
		done <- d.pool.ForEach(context.Background(), targets, func(ctx context.Context, t sshdrv.Target) error {
			return func() error { _, err := d.pool.Exec(ctx, t, "hold"); return err }()
		})
	}()
	// The handlers block on the gate: the server must see exactly
	// maxParallel of them at once, and no more while we wait.
	deadline := time.Now().Add(10 * time.Second)
	for d.running.Load() < maxParallel && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := d.running.Load(); n != maxParallel {
		t.Errorf("%d handlers running at once while gated, want MaxParallel=%d", n, maxParallel)
	}
	close(d.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := d.peak.Load(); p > maxParallel {
		t.Errorf("peak concurrency %d > MaxParallel %d", p, maxParallel)
	}
	if n := d.srv.Connections(); n != 12 {
		t.Errorf("%d connections for 12 devices", n)
	}
}

func TestForEachJoinsErrorsByDevice(t *testing.T) {
	d := newDevice(t, sshdrv.Config{Retries: -1}, nil)
	ghost := sshdrv.Target{Name: "ghost", Addr: "127.0.0.1:1", Cred: d.target.Cred}
	failing := d.target
	failing.Name = "h-fail"
	err := d.pool.ForEach(context.Background(), []sshdrv.Target{d.target, ghost, failing},
		func(ctx context.Context, t sshdrv.Target) error {
			cmd := "echo ok"
			if t.Name == "h-fail" {
				cmd = "fail"
			}
			r, err := d.pool.Exec(ctx, t, cmd)
			if err != nil {
				return err
			}
			return r.Err()
		})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "device ghost (127.0.0.1:1)") || !strings.Contains(msg, `device h-fail: command "fail": exit 3: it broke`) ||
		strings.Contains(msg, "device h1") {
		t.Errorf("joined error:\n%s", msg)
	}
	var ce *sshdrv.CommandError
	if !errors.As(err, &ce) || ce.Device != "h-fail" || ce.ExitStatus != 3 {
		t.Errorf("CommandError not reachable through the joined error: %v", ce)
	}
	// An error that does not name its device gets the name added.
	err = d.pool.ForEach(context.Background(), []sshdrv.Target{d.target},
		func(context.Context, sshdrv.Target) error { return errors.New("boom") })
	if err == nil || err.Error() != "device h1: boom" {
		t.Errorf("got %v", err)
	}
	// Once ctx is done, targets not started fail with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err = d.pool.ForEach(ctx, []sshdrv.Target{d.target}, func(context.Context, sshdrv.Target) error { calls++; return nil })
	if calls != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ForEach: calls=%d err=%v", calls, err)
	}
}
