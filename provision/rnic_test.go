package provision_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/provision"
)

// TestPlanApplyVerifyOn64Hosts: 8 switches, 64 hosts.
func TestPlanApplyVerifyOn64Hosts(t *testing.T) {
	inv, pool, _ := emulated(t, "leafspine:4x4:16@100")
	ctx := context.Background()
	prof := rnicProfile(106)
	calls := 0
	plan, err := provision.PlanRNIC(ctx, pool, inv, prof, func(string, int, int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 64*3 || calls != 64 {
		t.Fatalf("plan: %d changes (want trust, pfc and roce_tos on 64 hosts), %d progress calls", len(plan.Changes), calls)
	}
	in := provision.Intent{RNIC: prof}
	if _, err := provision.Verify(ctx, pool, inv, in, nil); !errors.Is(err, provision.ErrDrift) {
		t.Fatalf("verify before apply must report drift, got %v", err)
	}
	applied, err := provision.ApplyRNIC(ctx, pool, inv, plan, nil)
	if err != nil || len(applied) != len(plan.Changes) {
		t.Fatalf("apply: %v, %d of %d", err, len(applied), len(plan.Changes))
	}
	if drift, err := provision.Verify(ctx, pool, inv, in, nil); err != nil || drift.Len() != 0 {
		t.Fatalf("verify after apply: %v %+v", err, drift)
	}
	again, err := provision.PlanRNIC(ctx, pool, inv, prof, nil)
	if err != nil || len(again.Changes) != 0 {
		t.Fatalf("a second plan must be empty: %v, %d changes", err, len(again.Changes))
	}
	// one field changed in the profile: exactly one change per host
	plan, err = provision.PlanRNIC(ctx, pool, inv, rnicProfile(104), nil)
	if err != nil || len(plan.Changes) != 64 || plan.Changes[0].Field != "roce_tos" || plan.Changes[0].From != "106" || plan.Changes[0].To != "104" {
		t.Fatalf("changed ToS: %v, %d changes, first %+v", err, len(plan.Changes), plan.Changes)
	}
}

// Hosts with the upstream mlx5 driver get the same DCQCN and CNP values in
// debugfs; the plan says what they cannot do (per-priority ECN enable).
func TestRNICProfileOnBothDriverStacks(t *testing.T) {
	inv, pool, _ := emulatedWith(t, "leafspine:1x2:2@100", nil, emulator.Options{InboxDriverHosts: []string{"h2", "h4"}}, sshdrv.Config{})
	ctx := context.Background()
	dscp, prio := 48, 6
	prof := &connectx.Profile{Trust: "dscp", CNPDSCP: &dscp, CNPPriority: &prio,
		ECN: &connectx.ECNProfile{Priorities: []int{3}, RP: map[string]int{"rpg_ai_rate": 20}}}
	plan, err := provision.PlanRNIC(ctx, pool, inv, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range plan.Changes {
		per[c.Host]++
	}
	// OFED: trust, 14 enables off, rp param; inbox: trust, rp param
	if per["h1"] != 16 || per["h3"] != 16 || per["h2"] != 2 || per["h4"] != 2 {
		t.Fatalf("changes per host: %v", per)
	}
	if len(plan.Notes) != 2 || plan.Notes[0].Device != "h2" || !strings.Contains(plan.Notes[0].Text, "no per-priority ECN enable") {
		t.Fatalf("notes: %+v", plan.Notes)
	}
	if _, err := provision.ApplyRNIC(ctx, pool, inv, plan, nil); err != nil {
		t.Fatal(err)
	}
	again, err := provision.PlanRNIC(ctx, pool, inv, prof, nil)
	if err != nil || len(again.Changes) != 0 {
		t.Fatalf("second plan: %v %+v", err, again.Changes)
	}
}

// An inbox-driver host on an older kernel has no rp_max_rate and
// np_min_time_between_cnps in debugfs: the plan reads the files it has,
// changes what it can and notes what it cannot.
func TestRNICProfileOnAnOlderKernel(t *testing.T) {
	dir := t.TempDir()
	inv, pool, _ := emulatedWith(t, "leafspine:1x1:2@100", nil, emulator.Options{Dir: dir, InboxDriverHosts: []string{"h1", "h2"}}, sshdrv.Config{})
	h2, err := sshdrv.DeviceTarget(inv, "h2", sshdrv.EndpointSSH)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), h2, "test -d /sys"); err != nil { // an emulated host writes its /sys tree when first used
		t.Fatal(err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "devices", "h2", "sys", "kernel", "debug", "mlx5", "*", "cc_params"))
	if err != nil || len(old) != 1 {
		t.Fatalf("h2's cc_params: %v %v", old, err)
	}
	for _, f := range []string{"rp_max_rate", "np_min_time_between_cnps"} {
		if err := os.Remove(filepath.Join(old[0], f)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	prof := &connectx.Profile{ECN: &connectx.ECNProfile{RP: map[string]int{"rpg_max_rate": 100000, "rpg_ai_rate": 20}, NP: map[string]int{"min_time_between_cnps": 8}}}
	plan, err := provision.PlanRNIC(ctx, pool, inv, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]string{}
	for _, c := range plan.Changes {
		per[c.Host] = append(per[c.Host], c.Field)
	}
	if len(per["h1"]) != 3 || strings.Join(per["h2"], " ") != "ecn.roce_rp.rpg_ai_rate" {
		t.Fatalf("changes: %v", per)
	}
	var older []string
	for _, n := range plan.Notes {
		if strings.HasPrefix(n.Text, "older kernel") {
			older = append(older, n.Device+": "+n.Text)
		}
	}
	if len(older) != 2 || !strings.Contains(older[0], "h2: older kernel: ") || !strings.Contains(older[0], "no np_min_time_between_cnps file; ecn.np.min_time_between_cnps is not applied") ||
		!strings.Contains(older[1], "no rp_max_rate file; ecn.rp.rpg_max_rate is not applied") {
		t.Fatalf("notes: %q", older)
	}
	if _, err := provision.ApplyRNIC(ctx, pool, inv, plan, nil); err != nil {
		t.Fatal(err)
	}
	if again, err := provision.PlanRNIC(ctx, pool, inv, prof, nil); err != nil || len(again.Changes) != 0 {
		t.Fatalf("second plan: %v %+v", err, again.Changes)
	}
}
