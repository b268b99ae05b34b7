package tofino_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
)

// pushAndActivate pushes lb@1 (ecmp) and lb@2 (drill) and activates lb@1
// then lb@2 everywhere: lb@2 active, lb@1 previous.
func pushAndActivate(t *testing.T, r *rig) {
	t.Helper()
	ctx := context.Background()
	for _, b := range []*tofino.Bundle{bundle(t, "1", "ecmp", nil, "one"), bundle(t, "2", "drill", nil, "two")} {
		if _, err := r.drv.Push(ctx, r.ts, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{"lb@1", "lb@2"} {
		if rs, err := r.drv.Activate(ctx, r.ts, ref, nil); err != nil {
			t.Fatalf("activate %s: %v %+v", ref, err, rs)
		}
	}
}

// stopSwitchd kills every bf_switchd on sw, leaving its active image
// unhealthy.
func (r *rig) stopSwitchd(t *testing.T, sw string) {
	t.Helper()
	if res := r.exec(t, sw, "kill "+strings.Join(strings.Fields(r.pids(t, sw)), " ")); res.ExitStatus != 0 {
		t.Fatalf("kill: %v", res.Err())
	}
	for i := 0; i < 100 && r.bfSwitchds(t, sw) > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// Re-activating the active image when it is not healthy: a start whose
// program loads but whose ports stay down leaves the image running as it
// was (degraded), not bf_switchd stopped; one that does not load at all
// falls back to the previous image.
func TestReactivatingAnUnhealthyImage(t *testing.T) {
	r := newRig(t, "leafspine:1x2:2")
	ctx := context.Background()
	pushAndActivate(t, r)

	r.stopSwitchd(t, "leaf1")
	if s := r.status(t)["leaf1"]; s.Healthy || s.Active != "lb@2" {
		t.Fatalf("leaf1 with bf_switchd killed: %+v", s)
	}
	if err := r.lab.FailNext("leaf1", emulator.FaultPortsDown); err != nil {
		t.Fatal(err)
	}
	rs, err := r.drv.Activate(ctx, r.ts[1:2], "lb@2", nil) // leaf1
	if res := rs[0]; err == nil || res.Switch != "leaf1" || res.Outcome != tofino.Degraded || !res.Restarted ||
		!strings.Contains(res.Error, "ports up") || !strings.Contains(res.Rollback, "lb@2 stays active") ||
		!strings.Contains(res.Rollback, "'labctl image rollback' returns to lb@1") {
		t.Fatalf("re-activating lb@2 with leaf1's ports down: %v %+v", err, rs)
	}
	s := r.status(t)["leaf1"]
	if s.Active != "lb@2" || s.Previous != "lb@1" || s.Healthy || s.Health == nil || !s.Health.Running || !s.Health.Loaded ||
		s.Last.Outcome != tofino.Degraded {
		t.Errorf("leaf1 after a degraded re-activation: %+v %+v", s, s.Health)
	}
	if n := r.bfSwitchds(t, "leaf1"); n != 1 {
		t.Errorf("leaf1 runs %d bf_switchd after a degraded re-activation, want its image still running", n)
	}

	// the program does not load at all: back to the previous image
	r.stopSwitchd(t, "leaf2")
	if err := r.lab.FailNext("leaf2", emulator.FaultImageStart); err != nil {
		t.Fatal(err)
	}
	rs, err = r.drv.Activate(ctx, r.ts[2:3], "lb@2", nil) // leaf2
	if res := rs[0]; err == nil || res.Switch != "leaf2" || res.Outcome != tofino.RolledBack || !strings.Contains(res.Rollback, "lb@1 is active again") {
		t.Fatalf("re-activating lb@2 that cannot load on leaf2: %v %+v", err, rs)
	}
	if s := r.status(t)["leaf2"]; s.Active != "lb@1" || s.Previous != "lb@2" || !s.Healthy {
		t.Errorf("leaf2 after falling back: %+v", s)
	}
}

// A port read that fails (BF-Runtime still starting on a real switch) is
// "not healthy yet": the activation waits for a good read, and when none
// comes within the health timeout, the error quotes the last failure.
func TestPortReadErrorsAreNotFinal(t *testing.T) {
	r := newRig(t, "leafspine:1x1:1")
	ctx := context.Background()
	if _, err := r.drv.Push(ctx, r.ts, bundle(t, "1", "ecmp", nil, "one"), nil); err != nil {
		t.Fatal(err)
	}
	read := r.drv.PortsUp
	failing := map[string]int{"leaf1": 2, "spine1": 1 << 30} // failed reads to come
	var mu sync.Mutex
	r.drv.PortsUp = func(ctx context.Context, tg sshdrv.Target) (int, int, error) {
		mu.Lock()
		n := failing[tg.Name]
		failing[tg.Name]--
		mu.Unlock()
		if n > 0 {
			return 0, 0, fmt.Errorf("device %s: BF-Runtime is not ready (read %d)", tg.Name, n)
		}
		return read(ctx, tg)
	}
	r.drv.HealthTimeout = time.Second
	rs, err := r.drv.Activate(ctx, r.ts, "lb@1", nil)
	got := outcomes(rs)
	if got["leaf1"] != tofino.Activated || got["spine1"] != tofino.Failed || err == nil {
		t.Fatalf("%v %+v", err, rs)
	}
	for _, res := range rs {
		if res.Switch == "spine1" && (!strings.Contains(res.Error, "did not become healthy within 1s") ||
			!strings.Contains(res.Error, "the port state could not be read: device spine1: BF-Runtime is not ready")) {
			t.Errorf("spine1 must time out quoting the last port read error: %+v", res)
		}
	}
}

// A push that fails after staging leaves no staging directory behind.
func TestFailedPushRemovesItsStaging(t *testing.T) {
	r := newRig(t, "leafspine:1x1:1")
	ctx := context.Background()
	// a version directory that is in the way (not an image): the final
	// rename fails after the upload was staged and verified
	if err := r.pool.WriteFile(ctx, r.target(t, "leaf1"), "/opt/labctl/images/lb/1/stray", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := r.drv.Push(ctx, r.ts, bundle(t, "1", "ecmp", nil, "one"), nil)
	if got := outcomes(rs); err == nil || got["leaf1"] != tofino.Failed || got["spine1"] != tofino.Pushed ||
		!strings.Contains(err.Error(), `command "mv -T /opt/labctl/images/lb/.1.partial /opt/labctl/images/lb/1"`) {
		t.Fatalf("%v %+v", err, rs)
	}
	if _, err := r.pool.ReadFile(ctx, r.target(t, "leaf1"), "/opt/labctl/images/lb/.1.partial/image.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staging directory is still there after a failed push: %v", err)
	}
}
