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

// Each returns results in target order whatever order the devices finish
// in, tells progress about each one once, and marks targets it never
// started.
func TestEachOrdersResultsAndCountsProgress(t *testing.T) {
	d := newDevice(t, sshdrv.Config{MaxParallel: 4}, nil)
	var targets []sshdrv.Target
	for i := range 8 {
		tg := d.target
		tg.Name = fmt.Sprintf("h%d", i)
		targets = append(targets, tg)
	}
	var seen []int
	out, errs := sshdrv.Each(context.Background(), d.pool, targets, func(dev string, done, total int) {
		if total != 8 {
			t.Errorf("progress total %d", total)
		}
		seen = append(seen, done)
	}, func(ctx context.Context, tg sshdrv.Target) (string, error) {
		// later targets answer first: the order must not follow
		i := 0
		fmt.Sscanf(tg.Name, "h%d", &i)
		time.Sleep(time.Duration(8-i) * 10 * time.Millisecond)
		if i == 5 {
			return "", errors.New("boom")
		}
		r, err := d.pool.Exec(ctx, tg, "echo "+tg.Name)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(r.Stdout)), nil
	})
	for i, v := range out {
		want := fmt.Sprintf("h%d", i)
		if i == 5 {
			want = ""
			if errs[i] == nil || errs[i].Error() != "device h5: boom" {
				t.Errorf("error of h5: %v", errs[i])
			}
		} else if errs[i] != nil {
			t.Errorf("%s: %v", want, errs[i])
		}
		if v != want {
			t.Errorf("out[%d] = %q, want %q", i, v, want)
		}
	}
	if fmt.Sprint(seen) != "[1 2 3 4 5 6 7 8]" {
		t.Errorf("progress counted %v", seen)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, errs = sshdrv.Each(ctx, d.pool, targets[:2], nil, func(context.Context, sshdrv.Target) (string, error) { return "ran", nil })
	if out[0] != "" || !errors.Is(errs[1], context.Canceled) || !strings.Contains(errs[1].Error(), "device h1: not started") {
		t.Errorf("cancelled: %q %v", out, errs)
	}
}
