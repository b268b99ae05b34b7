package provision_test

import (
	"context"
	"errors"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
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
