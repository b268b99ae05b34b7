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
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// mixedLab starts leafspine:4x4:16@100 (8 switches, 64 hosts) with every
// other switch set through the SDE shell instead of NETCONF, and every
// eighth host running the upstream mlx5 driver instead of MLNX_OFED.
func mixedLab(t *testing.T) (*inventory.Lab, *sshdrv.Pool, *emulator.Lab) {
	t.Helper()
	var inbox []string
	for i := 8; i <= 64; i += 8 { // of the 64 hosts
		inbox = append(inbox, fmt.Sprintf("h%d", i))
	}
	l, inv, pool := testlab.Start(t, "leafspine:4x4:16@100", func(src *inventory.Lab) {
		for i := range src.Switches {
			if i%2 == 1 {
				src.Switches[i].QoSDriver = "sde"
			}
		}
	}, emulator.Options{Seed: 1, InboxDriverHosts: inbox}, sshdrv.Config{})
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
		BufferPools: map[string]provision.OrOff[int64]{"lossless": provision.Set[int64](4194320), "lossy": provision.Set[int64](6291520)},
		ECN:         map[int]provision.OrOff[provision.ECNProfile]{3: provision.Set(provision.ECNProfile{KminBytes: kmin, KmaxBytes: 800000, PmaxPercent: 10})},
		DSCPToTC:    map[int]provision.OrOff[int]{26: provision.Set(3), 48: provision.Set(6)}, Scheduler: "dwrr", DWRRWeights: map[int]int{0: 1, 3: 4}}
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
// RNIC driver stacks, through provision.Plan and provision.Apply (what
// 'labctl provision' and 'labctl run' use): plan lists every difference,
// apply succeeds, its read-back (verify) is clean, a second plan is empty,
// and one changed ECN threshold is one difference per switch.
func TestProvisionAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	inv, pool, _ := mixedLab(t)
	in := provision.Intent{Switch: switchProfile(50000), RNIC: rnicProfile(), Atomic: true}

	plan, err := provision.Plan(ctx, pool, inv, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every value of the profile differs on a fresh switch of either
	// driver, but the lossless priority and the (static) thresholds' alpha
	// where the switch starts with the twin's defaults, and the scheduler
	// on a Tofino that starts with DWRR.
	want := []string{"dscp[26].tc", "dscp[48].tc", "headroom_bytes", "pool[lossless].bytes", "pool[lossy].bytes",
		"queue[0].dwrr_weight", "queue[3].dwrr_weight", "queue[3].ecn.kmax_bytes", "queue[3].ecn.kmin_bytes",
		"queue[3].ecn.pmax_percent", "xoff_bytes", "xon_bytes"}
	maybe := []string{"priority[3].pfc", "scheduler"}
	fields := map[string][]string{}
	for _, c := range plan.Switches {
		fields[c.Switch] = append(fields[c.Switch], c.Field)
	}
	for _, s := range inv.Switches {
		got := fields[s.Name]
		missing := slices.DeleteFunc(slices.Clone(want), func(f string) bool { return slices.Contains(got, f) })
		extra := slices.DeleteFunc(slices.Clone(got), func(f string) bool { return slices.Contains(want, f) || slices.Contains(maybe, f) })
		if len(missing)+len(extra) > 0 {
			t.Errorf("plan of %s (%s): lacks %v, has more %v", s.Name, s.QoSDriver, missing, extra)
		}
	}
	// OFED hosts: trust, pfc, roce_tos, cnp_dscp, 14 ECN enables off (7 per
	// point), one RP parameter = 19 (roce_mode 2 and cnp_priority 6 are
	// the defaults). Inbox hosts (every eighth): no enables, so 5, and a note.
	perHost := countBy(plan.RNICs, func(c connectx.Change) string { return c.Host })
	for i, h := range inv.Hosts {
		want := 19
		if (i+1)%8 == 0 {
			want = 5
		}
		if perHost[h.Name] != want {
			t.Errorf("plan of %s: %d changes, want %d", h.Name, perHost[h.Name], want)
		}
	}
	if len(plan.Notes) != 8 {
		t.Errorf("%d notes, want one per inbox-driver host (8): %+v", len(plan.Notes), plan.Notes)
	}

	rep, err := provision.Apply(ctx, pool, inv, in, nil)
	if err != nil {
		t.Fatalf("apply: %v %+v", err, rep)
	}
	if out := countBy(rep.Switches, func(r provision.SwitchResult) string { return r.Outcome }); out["committed"] != 8 {
		t.Errorf("switch results: %v", out)
	}
	if len(rep.RNICs) != len(plan.RNICs) || rep.Drift.Len() != 0 {
		t.Errorf("RNICs: %d of %d changes made; read-back after apply: %+v", len(rep.RNICs), len(plan.RNICs), rep.Drift)
	}
	if again, err := provision.Plan(ctx, pool, inv, in, nil); err != nil || again.Len() != 0 {
		t.Fatalf("a second plan: %v %+v", err, again)
	}
	// one changed ECN threshold: exactly one difference per switch
	changed, err := provision.Plan(ctx, pool, inv, provision.Intent{Switch: switchProfile(150000), RNIC: rnicProfile()}, nil)
	if err != nil || changed.Len() != 8 {
		t.Fatalf("changed kmin: %v %+v", err, changed)
	}
	for _, c := range changed.Switches {
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
	}{
		{"netconf atomic", "leaf1", "operation-failed", true},
		{"netconf", "leaf1", "operation-failed", false},
		{"sde atomic", "leaf2", "Hardware error", true},
		{"sde", "leaf2", "Hardware error", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// start each case from the same config on every switch
			if _, err := provision.ApplySwitches(ctx, pool, inv, switchProfile(100000), true, nil); err != nil {
				t.Fatal(err)
			}
			before := readAll()
			if err := l.FailNext(tc.failing, emulator.FaultCommit); err != nil {
				t.Fatal(err)
			}
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
