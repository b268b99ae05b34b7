package provision_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

func imageBundle(t *testing.T, version, scheme string) *tofino.Bundle {
	t.Helper()
	dir := t.TempDir()
	if _, err := tofino.WriteBundle(dir, tofino.BundleSpec{Name: "lb", Version: version, Program: "lb_" + scheme,
		LB: tofino.LB{Scheme: scheme}}); err != nil {
		t.Fatal(err)
	}
	b, err := tofino.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImagePlanApplyVerify(t *testing.T) {
	inv, pool, l := emulated(t, "leafspine:1x2:2")
	ctx := context.Background()
	v1, v2 := imageBundle(t, "1", "ecmp"), imageBundle(t, "2", "letflow")

	plan, err := provision.Plan(ctx, pool, inv, provision.Intent{Image: v1}, nil)
	if err != nil || len(plan.Images) != 3 || plan.Images[0].From != "" || plan.Images[0].To != "lb@1" {
		t.Fatalf("plan on a fresh lab: %v %+v", err, plan)
	}
	if _, err := provision.Verify(ctx, pool, inv, provision.Intent{Image: v1}, nil); !errors.Is(err, provision.ErrDrift) {
		t.Fatalf("verify before apply: %v", err)
	}
	rep, err := provision.Apply(ctx, pool, inv, provision.Intent{Image: v1}, nil)
	if err != nil || len(rep.Images) != 3 || rep.Images[0].Outcome != tofino.Activated || rep.Drift.Len() != 0 || len(rep.ImageReadBack) != 3 {
		t.Fatalf("apply: %v %+v", err, rep)
	}
	if drift, err := provision.Verify(ctx, pool, inv, provision.Intent{Image: v1}, nil); err != nil || drift.Len() != 0 {
		t.Fatalf("verify after apply: %v %+v", err, drift)
	}

	// v2 fails to start on leaf2: leaf2 rolls back to v1, the others move
	failNext(t, l, "leaf2", emulator.FaultImageStart)
	rep, err = provision.Apply(ctx, pool, inv, provision.Intent{Image: v2}, nil)
	if err == nil || len(rep.Images) != 3 {
		t.Fatalf("apply with a failing start: %v %+v", err, rep)
	}
	for _, r := range rep.Images {
		if want := map[bool]string{true: tofino.RolledBack, false: tofino.Activated}[r.Switch == "leaf2"]; r.Outcome != want {
			t.Errorf("%s: %s, want %s (%s)", r.Switch, r.Outcome, want, r.Error)
		}
	}
	drift := rep.Drift
	if !errors.Is(err, provision.ErrDrift) || drift.Len() != 1 || drift.Images[0].Switch != "leaf2" || drift.Images[0].From != "lb@1" {
		t.Fatalf("read-back: %v %+v", err, drift)
	}
}

// TestImageApplyNotesSDEReset: an image start resets the QoS an SDE-shell
// switch was given; an apply with no switch profile to set it again says
// which switches lost it.
func TestImageApplyNotesSDEReset(t *testing.T) {
	inv, pool, _ := emulatedWith(t, "leafspine:1x2:2", func(lab *inventory.Lab) {
		for i := range lab.Switches {
			if lab.Switches[i].Name == "leaf1" {
				lab.Switches[i].QoSDriver = provision.DriverSDE
			}
		}
	}, emulator.Options{}, sshdrv.Config{})
	rep, err := provision.Apply(context.Background(), pool, inv, provision.Intent{Image: imageBundle(t, "1", "ecmp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, n := range rep.Notes {
		if strings.Contains(n, "back at their defaults") {
			note = n
		}
	}
	if !strings.Contains(note, "bf_switchd restarted on leaf1 ") || strings.Contains(note, "leaf2") {
		t.Errorf("notes %q: want leaf1 alone named as having lost its SDE QoS", rep.Notes)
	}
}
