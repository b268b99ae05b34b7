package provision_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

func plan(t *testing.T, ctx context.Context, pool *sshdrv.Pool, inv *inventory.Lab, p *provision.QoSProfile) []provision.SwitchChange {
	t.Helper()
	sp, err := provision.PlanSwitches(ctx, pool, inv, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Changes
}

func TestSwitchQoSPlanApplyVerify(t *testing.T) {
	inv, pool, l := emulated(t, "leafspine:4x4:16@100") // 8 switches
	ctx := context.Background()
	plansFields(t, inv, plan(t, ctx, pool, inv, qosProfile(100000)), "xoff_bytes", "xon_bytes", "queue[3].ecn.kmax_bytes", "queue[3].ecn.pmax_percent")
	rs, err := provision.ApplySwitches(ctx, pool, inv, qosProfile(100000), false, nil)
	if err != nil || outcomes(rs)["committed"] != 8 {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if again := plan(t, ctx, pool, inv, qosProfile(100000)); len(again) != 0 {
		t.Fatalf("a second plan must be empty: %+v", again)
	}
	// one changed ECN threshold: exactly one change per switch
	if p := plan(t, ctx, pool, inv, qosProfile(150000)); len(p) != 8 || p[0].Field != "queue[3].ecn.kmin_bytes" {
		t.Fatalf("changed threshold: %+v", p)
	}

	// atomic: a commit that fails on one switch rolls every switch back
	before := readAll(t, pool, inv)
	failNext(t, l, "leaf1", emulator.FaultCommit)
	rs, err = provision.ApplySwitches(ctx, pool, inv, qosProfile(150000), true, nil)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 7 {
		t.Fatalf("atomic with a failing switch: %v %+v", err, rs)
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Fatal("after an atomic failure every switch keeps its previous config")
	}

	// not atomic: the others keep the new config, the failing one the old
	failNext(t, l, "leaf1", emulator.FaultCommit)
	rs, err = provision.ApplySwitches(ctx, pool, inv, qosProfile(150000), false, nil)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["committed"] != 7 {
		t.Fatalf("non-atomic with a failing switch: %v %+v", err, rs)
	}
	if p := plan(t, ctx, pool, inv, qosProfile(150000)); len(p) != 1 || p[0].Switch != "leaf1" || p[0].From != "100000" {
		t.Fatalf("only leaf1 keeps its old config: %+v", p)
	}
	if after, err := provision.ReadSwitch(ctx, pool, inv, "leaf1"); err != nil || !reflect.DeepEqual(before["leaf1"], after) {
		t.Fatalf("leaf1's read-back config changed (%v)", err)
	}
	for _, r := range rs {
		if r.Switch == "leaf1" && (r.Error == "" || !strings.Contains(r.Error, "leaf1") || !strings.Contains(r.Error, "operation-failed")) {
			t.Errorf("the failure must name the device and the rpc-error: %+v", r)
		}
	}
}

// Half the switches are configured through the SDE shell: one plan lists
// both kinds alike, a failing SDE switch is restored, --atomic restores
// SDE switches that were already written.
func TestSwitchQoSMixedDrivers(t *testing.T) {
	inv, pool, l := emulatedWith(t, "leafspine:2x2:2@100", sdeEvery(2, 0), emulator.Options{}, sshdrv.Config{})
	ctx := context.Background()
	prof := fullProfile(100000)
	plansFields(t, inv, plan(t, ctx, pool, inv, prof), "queue[3].ecn.kmax_bytes", "dscp[26].tc", "queue[3].dwrr_weight")
	if rs, err := provision.ApplySwitches(ctx, pool, inv, prof, true, nil); err != nil || outcomes(rs)["committed"] != 4 {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if again := plan(t, ctx, pool, inv, prof); len(again) != 0 {
		t.Fatalf("second plan: %+v", again)
	}
	changed := fullProfile(150000)
	if p := plan(t, ctx, pool, inv, changed); len(p) != 4 {
		t.Fatalf("one changed threshold: %+v", p)
	}

	sdeSwitch := inv.Switches[0].Name // sde
	before := readAll(t, pool, inv)
	failNext(t, l, sdeSwitch, emulator.FaultCommit)
	rs, err := provision.ApplySwitches(ctx, pool, inv, changed, true, nil)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 3 {
		t.Fatalf("atomic with a failing SDE switch: %v %+v", err, rs)
	}
	for _, r := range rs {
		if r.Switch == sdeSwitch && (!r.Restored || !strings.Contains(r.Error, "device "+sdeSwitch) || !strings.Contains(r.Error, "Hardware error")) {
			t.Errorf("the failure must name the device and what the shell answered, and say it was restored: %+v", r)
		}
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Error("not every switch is on its previous config after an atomic failure")
	}
	failNext(t, l, sdeSwitch, emulator.FaultCommit)
	rs, err = provision.ApplySwitches(ctx, pool, inv, changed, false, nil)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["committed"] != 3 {
		t.Fatalf("non-atomic with a failing SDE switch: %v %+v", err, rs)
	}
	if p := plan(t, ctx, pool, inv, changed); len(p) != 1 || p[0].Switch != sdeSwitch {
		t.Fatalf("only the failing switch keeps its old config: %+v", p)
	}
}

// Cancelling an apply half way (Ctrl-C) leaves every switch on its
// previous configuration, each with a result: the staged ones rolled back
// (an SDE switch too, which has no confirmed commit to expire), the
// failing one failed, the ones not reached untouched.
func TestApplySwitchesInterrupted(t *testing.T) {
	// One switch at a time, so the order is the lab's: s0 (SDE) and s1
	// (NETCONF) are staged when s2 fails and cancels, s3 is never reached.
	inv, pool, l := emulatedWith(t, "leafspine:2x2:2@100", sdeEvery(4, 0), emulator.Options{}, sshdrv.Config{MaxParallel: 1})
	names := []string{inv.Switches[0].Name, inv.Switches[1].Name, inv.Switches[2].Name, inv.Switches[3].Name}
	before := readAll(t, pool, inv)
	failNext(t, l, names[2], emulator.FaultCommit)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs, err := provision.ApplySwitches(ctx, pool, inv, fullProfile(100000), false, func(device string, _, _ int) {
		if device == names[2] {
			cancel() // as Ctrl-C would, while the others are staged
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error: %v", err)
	}
	want := []struct {
		outcome  string
		restored bool
	}{{provision.RolledBack, true}, {provision.RolledBack, false}, {provision.Failed, false}, {provision.NotStarted, false}}
	if len(rs) != 4 {
		t.Fatalf("%d results for 4 switches: %+v", len(rs), rs)
	}
	for i, w := range want {
		if rs[i].Switch != names[i] || rs[i].Outcome != w.outcome || rs[i].Restored != w.restored {
			t.Errorf("result %d: %+v, want %s %s (restored %t)", i, rs[i], names[i], w.outcome, w.restored)
		}
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Error("an interrupted apply left a switch changed")
	}
}

// With --atomic, phase two reads every staged switch back before it
// confirms any: one that does not read back rolls them all back.
func TestAtomicReadsEverySwitchBackBeforeConfirming(t *testing.T) {
	inv, pool, l := emulatedWith(t, "leafspine:2x2:2@100", sdeEvery(4, 1), emulator.Options{}, sshdrv.Config{MaxParallel: 1})
	ctx := context.Background()
	sw := inv.Switches
	sde, last := sw[1].Name, sw[3].Name
	// Only the last switch gets the profile: it is unchanged below, and
	// its result comes last in phase one, once the others are staged.
	for _, s := range sw[:3] {
		failNext(t, l, s.Name, emulator.FaultCommit)
	}
	if rs, err := provision.ApplySwitches(ctx, pool, inv, fullProfile(100000), false, nil); err == nil || outcomes(rs)["committed"] != 1 || rs[3].Outcome != provision.Committed {
		t.Fatalf("setup: %v %+v", err, rs)
	}
	before := readAll(t, pool, inv)
	rs, err := provision.ApplySwitches(ctx, pool, inv, fullProfile(100000), true, func(device string, _, _ int) {
		if device == last { // every other switch is staged now: make the SDE switch's read-back fail
			failNext(t, l, sde, emulator.FaultSSHCommand)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "device "+sde) {
		t.Fatalf("error: %v", err)
	}
	got := map[string]string{}
	for _, r := range rs {
		got[r.Switch] = r.Outcome
	}
	if got[sw[0].Name] != provision.RolledBack || got[sde] != provision.Failed || got[sw[2].Name] != provision.RolledBack || got[last] != provision.Unchanged {
		t.Fatalf("outcomes: %v", got)
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Error("a switch was confirmed although another did not read back")
	}
}

// A switch staged in the first wave must still be waiting when the last
// wave has staged and every switch was read back.
func TestConfirmTimeoutCoversEveryWave(t *testing.T) {
	for _, tc := range []struct{ switches, parallel, waves int }{{8, 32, 1}, {256, 32, 8}, {8, 1, 8}} {
		got := provision.ConfirmTimeout(tc.switches, tc.parallel)
		if need := time.Duration(3*tc.waves) * provision.StepTimeout; got < need {
			t.Errorf("%d switches, %d at a time: %v < %v", tc.switches, tc.parallel, got, need)
		}
	}
}

// A profile removes ECN marking, a DSCP entry and a pool with `off`, on
// both drivers; what a profile does not name is noted, not changed.
func TestProfileRemovesEntries(t *testing.T) {
	inv, pool, _ := emulatedWith(t, "leafspine:2x2:2@100", sdeEvery(2, 0), emulator.Options{}, sshdrv.Config{})
	ctx := context.Background()
	full := fullProfile(100000)
	full.ECN[5] = provision.Set(provision.ECNProfile{KminBytes: 8000, KmaxBytes: 16000, PmaxPercent: 10})
	full.DSCPToTC[10] = provision.Set(2)
	if rs, err := provision.ApplySwitches(ctx, pool, inv, full, true, nil); err != nil {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "qos.yaml")
	if err := os.WriteFile(file, []byte("pfc_priorities: [3]\nxoff_bytes: 524320\nxon_bytes: 393280\nheadroom_bytes: 65600\n"+
		"buffer_pools: {lossless: 4194320, lossy: off}\ndscp_to_tc: {26: 3, 48: 6, 10: off}\nscheduler: dwrr\ndwrr_weights: {0: 1, 3: 4}\n"+
		"ecn:\n  3: {kmin_bytes: 100000, kmax_bytes: 800000, pmax_percent: 10}\n  5: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off, err := provision.LoadQoSProfile(file)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := provision.PlanSwitches(ctx, pool, inv, off, nil)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range sp.Changes {
		if c.To != "none" {
			t.Errorf("a change that is not a removal: %+v", c)
		}
		per[c.Field]++
	}
	if len(per) != 5 || per["pool[lossy].bytes"] != 4 || per["dscp[10].tc"] != 4 || per["queue[5].ecn.kmin_bytes"] != 4 {
		t.Fatalf("removals planned: %v", per)
	}
	if rs, err := provision.ApplySwitches(ctx, pool, inv, off, true, nil); err != nil || outcomes(rs)["committed"] != 4 {
		t.Fatalf("apply of the removals: %v %+v", err, rs)
	}
	if again := plan(t, ctx, pool, inv, off); len(again) != 0 {
		t.Fatalf("after the removals: %+v", again)
	}
	for _, sw := range inv.Switches {
		have, err := provision.ReadSwitch(ctx, pool, inv, sw.Name)
		if err != nil {
			t.Fatal(err)
		}
		for port, c := range have {
			if _, ok := c.ECN[5]; ok || c.DSCP[10] != 0 || c.Pools["lossy"] != 0 || c.ECN[3].KminBytes != 100000 {
				t.Errorf("%s %s still holds a removed entry: %+v", sw.Name, port, c)
			}
		}
	}

	// A profile that names only queue 3 leaves other marking in place,
	// and the plan says so.
	if _, err := provision.ApplySwitches(ctx, pool, inv, full, true, nil); err != nil {
		t.Fatal(err)
	}
	sp, err = provision.PlanSwitches(ctx, pool, inv, fullProfile(100000), nil)
	if err != nil || len(sp.Changes) != 0 {
		t.Fatalf("plan: %v %+v", err, sp.Changes)
	}
	notes := map[string]int{}
	for _, n := range sp.Notes {
		notes[strings.SplitN(n.Text, " ", 2)[0]]++
	}
	if notes["queue[5].ecn"] != 4 || notes["dscp[10].tc"] != 4 || len(notes) != 2 {
		t.Fatalf("notes: %+v", sp.Notes)
	}
}

func TestQoSProfileErrorsNameFileLineField(t *testing.T) {
	for doc, want := range map[string]string{
		"pfc_priorities: [3, 9]\n":                                                "p.yaml:1: pfc_priorities[1]: 9 is not a priority",
		"xoff_bytes: 100\nxon_bytes: 200\n":                                       "p.yaml:2: xon_bytes: 200 is above xoff_bytes 100",
		"ecn:\n  3: {kmin_bytes: 500000, kmax_bytes: 400000}\n":                   "p.yaml:2: ecn.3.kmin_bytes: kmin_bytes 500000 exceeds kmax_bytes 400000",
		"scheduler: dwrr\ndwrr_weights:\n  3: 0\n":                                "p.yaml:3: dwrr_weights.3: weight 0 is not 1..1023",
		"pfc_alpha: 0.3\n":                                                        "p.yaml:1: pfc_alpha: 0.3 is not one of",
		"buffer_pools: {lossless: 1024, video: 1}\n":                              "p.yaml:1: buffer_pools.video: unknown pool",
		"dscp_to_tc:\n  26: 3\n  70: 1\n":                                         "p.yaml:3: dscp_to_tc.70: 70 is not a DSCP",
		"scheduler: wfq\n":                                                        "p.yaml:1: scheduler:",
		"xoff_bytes: 524288\nxon_bytes: 393216\nkmin: 1\n":                        "p.yaml:3: kmin: unknown field (known here: pfc_priorities, xoff_bytes,",
		"ecn:\n  3: {kmin_bytes: 1, kmax_byte: 2}\n":                              "p.yaml:2: ecn.3.kmax_byte: unknown field (known here: kmin_bytes, kmax_bytes, pmax_percent)",
		"xoff_bytes: lots\n":                                                      `p.yaml:1: xoff_bytes: want an integer, got "lots"`,
		"dscp_to_tc: {26: of}\n":                                                  `p.yaml:1: dscp_to_tc.26: want an integer, got "of"`,
		"ecn:\n  7: on\n":                                                         `p.yaml:2: ecn.7: want a mapping, got "on"`,
		"pfc_priorities: [3]\nxoff_bytes: 1000\nxon_bytes: 0\npfc_alpha: 0.125\n": "p.yaml:4: pfc_alpha: give either",
		"ecn:\n  9: off\n":                                                        "p.yaml:2: ecn.9: queue 9 is not a queue",
	} {
		p := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := provision.LoadQoSProfile(p)
		if err == nil || !strings.Contains(err.Error(), filepath.Dir(p)) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "p.yaml")) {
			t.Errorf("%q: got %v, want %s", doc, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "ok.yaml")
	if err := os.WriteFile(p, []byte("pfc_priorities: [3]\npfc_alpha: 0.125\nheadroom_bytes: 65536\nbuffer_pools: {lossless: 4194304, lossy: 6291456}\n"+
		"ecn:\n  3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}\n  5: off\ndscp_to_tc: {26: 3}\nscheduler: dwrr\ndwrr_weights: {3: 4, 0: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prof, err := provision.LoadQoSProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if w := prof.Want(); w.ECN[3].KmaxBytes != 400000 || len(w.Remove.ECN) != 1 || w.Remove.ECN[0] != 5 {
		t.Fatalf("want: %+v", w)
	}
}

// Every problem of a profile is reported, not just the first.
func TestQoSProfileReportsEveryProblem(t *testing.T) {
	doc := "pfc_priorities: [9]\necn:\n  3: {kmin_bytes: 500000, kmax_bytes: 400000, pmax_percent: 120}\n"
	_, err := provision.ParseQoSProfile([]byte(doc), "p.yaml")
	var got []string
	for _, l := range strings.Split(fmt.Sprint(err), "\n") {
		f := strings.SplitN(l, ": ", 3)
		if len(f) == 3 {
			got = append(got, f[0]+" "+f[1])
		}
	}
	if strings.Join(got, ", ") != "p.yaml:1 pfc_priorities[0], p.yaml:3 ecn.3.kmin_bytes, p.yaml:3 ecn.3.pmax_percent" {
		t.Fatalf("got %v", err)
	}
}
