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
	d := tofino.NewDriver(pool, inv)
	v1, v2 := imageBundle(t, "1", "ecmp"), imageBundle(t, "2", "letflow")

	plan, err := provision.PlanImage(ctx, d, inv, v1, nil)
	if err != nil || len(plan) != 3 || plan[0].From != "" || plan[0].To != "lb@1" {
		t.Fatalf("plan on a fresh lab: %v %+v", err, plan)
	}
	if _, err := provision.VerifyImage(ctx, d, inv, v1, nil); !errors.Is(err, provision.ErrDrift) {
		t.Fatalf("verify before apply: %v", err)
	}
	rs, err := provision.ApplyImage(ctx, d, inv, v1, nil)
	if err != nil || len(rs) != 3 || rs[0].Outcome != tofino.Activated {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if drift, err := provision.VerifyImage(ctx, d, inv, v1, nil); err != nil || len(drift) != 0 {
		t.Fatalf("verify after apply: %v %+v", err, drift)
	}

	// v2 fails to start on leaf2: it stays on v1, the others move
	l.FailNext("leaf2", emulator.FaultImageStart)
	rs, err = provision.ApplyImage(ctx, d, inv, v2, nil)
	if err == nil || len(rs) != 3 {
		t.Fatalf("apply with a failing start: %v %+v", err, rs)
	}
	drift, err := provision.VerifyImage(ctx, d, inv, v2, nil)
	if !errors.Is(err, provision.ErrDrift) || len(drift) != 1 || drift[0].Switch != "leaf2" || drift[0].From != "lb@1" {
		t.Fatalf("read-back: %v %+v", err, drift)
	}
}
