package e2e_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// mixedLab starts leafspine:4x4:16@100 (8 switches, 64 hosts) with every
// other switch set through the SDE shell instead of NETCONF, and every
// eighth host running the upstream mlx5 driver instead of MLNX_OFED.
func mixedLab(t *testing.T) (*inventory.Lab, *sshdrv.Pool, *emulator.Lab) {
	t.Helper()
	src, err := inventory.Generate("leafspine:4x4:16@100")
	if err != nil {
		t.Fatal(err)
	}
	for i := range src.Switches {
		if i%2 == 1 {
			src.Switches[i].QoSDriver = "sde"
		}
	}
	var inbox []string
	for i := 8; i <= len(src.Hosts); i += 8 {
		inbox = append(inbox, fmt.Sprintf("h%d", i))
	}
	l, err := emulator.Start(context.Background(), src, emulator.Options{Dir: t.TempDir(), Seed: 1, InboxDriverHosts: inbox})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	t.Cleanup(func() { pool.Close() })
	return inv, pool, l
}

// switchProfile sets every part of the switch model, each value other
// than the emulated switches' defaults (the twin's: lossless 3, XOFF/XON
// 512/384 KiB, 64 KiB headroom, the buffer halved into the pools, strict
// priority, ECN 100000/400000/20% on queue 3) except the lossless
// priority; byte values are whole 80-byte cells so NETCONF and SDE
// switches are asked for the same bytes.
func switchProfile(kmin int64) *provision.QoSProfile {
	return &provision.QoSProfile{PFCPriorities: []int{3}, XoffBytes: 262160, XonBytes: 196640, HeadroomBytes: 131200,
		BufferPools: map[string]int64{"lossless": 4194320, "lossy": 6291520},
		ECN:         map[int]provision.ECNProfile{3: {KminBytes: kmin, KmaxBytes: 800000, PmaxPercent: 10}},
		DSCPToTC:    map[int]int{26: 3, 48: 6}, Scheduler: "dwrr", DWRRWeights: map[int]int{0: 1, 3: 4}}
}

func rnicProfile() *connectx.Profile {
	tos, dscp, prio := 106, 46, 6
	return &connectx.Profile{Trust: "dscp", PFCPriorities: []int{3}, RoCETOS: &tos, RoCEMode: 2, CNPDSCP: &dscp, CNPPriority: &prio,
		ECN: &connectx.ECNProfile{Priorities: []int{3}, RP: map[string]int{"rpg_ai_rate": 10}}}
}

func countBy[T any](xs []T, key func(T) string) map[string]int {
	m := map[string]int{}
	for _, x := range xs {
		m[key(x)]++
	}
	return m
}

// TestProvisionAcceptance is the provisioning issue's acceptance on an
// emulated lab of 8 switches and 64 hosts, both switch drivers and both
// RNIC driver stacks: plan lists every difference, apply succeeds, verify
// is clean, a second plan is empty, and one changed ECN threshold is one
// difference per switch.
func TestProvisionAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	inv, pool, _ := mixedLab(t)
	sw, rn := switchProfile(50000), rnicProfile()

	plan, err := provision.PlanSwitches(ctx, pool, inv, sw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh switch of either driver holds the twin's defaults: every
	// value of the profile differs but the lossless priority and the
	// (static) thresholds' alpha.
	want := []string{"dscp[26].tc", "dscp[48].tc", "headroom_bytes", "pool[lossless].bytes", "pool[lossy].bytes",
		"queue[0].dwrr_weight", "queue[3].dwrr_weight", "queue[3].ecn.kmax_bytes", "queue[3].ecn.kmin_bytes",
		"queue[3].ecn.pmax_percent", "scheduler", "xoff_bytes", "xon_bytes"}
	fields := map[string][]string{}
	for _, c := range plan {
		fields[c.Switch] = append(fields[c.Switch], c.Field)
	}
	for _, s := range inv.Switches {
		got := fields[s.Name]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("plan of %s (%s): %v, want %v", s.Name, s.QoSDriver, got, want)
		}
	}
	rplan, err := provision.PlanRNIC(ctx, pool, inv, rn, nil)
	if err != nil {
		t.Fatal(err)
	}
	// OFED hosts: trust, pfc, roce_tos, cnp_dscp, 14 ECN enables off (7 per
	// point), one RP parameter = 19 (roce_mode 2 and cnp_priority 6 are
	// the defaults). Inbox hosts (every eighth): no enables, so 5, and a note.
	perHost := countBy(rplan.Changes, func(c connectx.Change) string { return c.Host })
	for i, h := range inv.Hosts {
		want := 19
		if (i+1)%8 == 0 {
			want = 5
		}
		if perHost[h.Name] != want {
			t.Errorf("plan of %s: %d changes, want %d", h.Name, perHost[h.Name], want)
		}
	}
	if len(rplan.Notes) != 8 {
		t.Errorf("%d notes, want one per inbox-driver host (8)", len(rplan.Notes))
	}

	rs, err := provision.ApplySwitches(ctx, pool, inv, sw, true, nil)
	if err != nil || countBy(rs, func(r provision.SwitchResult) string { return r.Outcome })["committed"] != 8 {
		t.Fatalf("switch apply: %v %+v", err, rs)
	}
	if applied, err := provision.ApplyRNIC(ctx, pool, inv, rplan, nil); err != nil || len(applied) != len(rplan.Changes) {
		t.Fatalf("RNIC apply: %v (%d of %d)", err, len(applied), len(rplan.Changes))
	}
	// verify is clean, and a second plan is empty
	if again, err := provision.PlanSwitches(ctx, pool, inv, sw, nil); err != nil || len(again) != 0 {
		t.Fatalf("switches after apply: %v %+v", err, again)
	}
	if drift, err := provision.VerifyRNIC(ctx, pool, inv, rn, nil); err != nil || len(drift) != 0 {
		t.Fatalf("RNICs after apply: %v %+v", err, drift)
	}
	// one changed ECN threshold: exactly one difference per switch
	changed, err := provision.PlanSwitches(ctx, pool, inv, switchProfile(150000), nil)
	if err != nil || len(changed) != 8 {
		t.Fatalf("changed kmin: %v %+v", err, changed)
	}
	for _, c := range changed {
		if c.Field != "queue[3].ecn.kmin_bytes" || c.From != "50000" || c.To != "150000" || len(c.Ports) != 0 {
			t.Errorf("changed kmin: %+v", c)
		}
	}
}

// TestProvisionCommitFailure: a switch that fails to take the profile is
// left on its previous config (read back and compared), the error names the
// device and what it answered, and the other switches all keep the new
// config (default) or all roll back (--atomic), for a NETCONF switch and
// for an SDE-shell switch.
func TestProvisionCommitFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	inv, pool, l := mixedLab(t)
	if rs, err := provision.ApplySwitches(ctx, pool, inv, switchProfile(100000), true, nil); err != nil {
		t.Fatalf("%v %+v", err, rs)
	}
	readAll := func() map[string]any {
		m := map[string]any{}
		for _, s := range inv.Switches {
			c, err := provision.ReadSwitch(ctx, pool, inv, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			m[s.Name] = c
		}
		return m
	}
	for _, tc := range []struct {
		name, failing, answer string
		atomic                bool
		inject                func()
	}{
		{"netconf atomic", "leaf1", "operation-failed", true, func() { l.FailNext("leaf1", emulator.FaultCommit) }},
		{"netconf", "leaf1", "operation-failed", false, func() { l.FailNext("leaf1", emulator.FaultCommit) }},
		{"sde atomic", "leaf2", "Hardware error", true, func() { l.FailNext("leaf2", emulator.FaultCommit) }},
		{"sde", "leaf2", "Hardware error", false, func() { l.FailNext("leaf2", emulator.FaultCommit) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// start each case from the same config on every switch
			if _, err := provision.ApplySwitches(ctx, pool, inv, switchProfile(100000), true, nil); err != nil {
				t.Fatal(err)
			}
			before := readAll()
			tc.inject()
			rs, err := provision.ApplySwitches(ctx, pool, inv, switchProfile(150000), tc.atomic, nil)
			if err == nil || !strings.Contains(err.Error(), "device "+tc.failing) || !strings.Contains(err.Error(), tc.answer) {
				t.Fatalf("the error must name %s and say %q: %v", tc.failing, tc.answer, err)
			}
			out := countBy(rs, func(r provision.SwitchResult) string { return r.Outcome })
			after := readAll()
			if !reflect.DeepEqual(before[tc.failing], after[tc.failing]) {
				t.Errorf("%s is not on its previous config", tc.failing)
			}
			for _, s := range inv.Switches {
				if s.Name == tc.failing {
					continue
				}
				same := reflect.DeepEqual(before[s.Name], after[s.Name])
				if tc.atomic != same {
					t.Errorf("%s (%s): kept its previous config = %v with atomic %v", s.Name, s.QoSDriver, same, tc.atomic)
				}
			}
			if tc.atomic && (out["failed"] != 1 || out["rolled-back"] != 7) || !tc.atomic && (out["failed"] != 1 || out["committed"] != 7) {
				t.Errorf("outcomes %v", out)
			}
		})
	}
}
