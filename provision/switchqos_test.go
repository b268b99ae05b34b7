package provision_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// qosProfile differs from the emulated switches' defaults (the twin's:
// lossless 3, XOFF 512 KiB, XON 384 KiB, ECN 100000/400000/20%) in its
// thresholds, ECN kmax and pmax.
func qosProfile(kmin int64) *provision.QoSProfile {
	return &provision.QoSProfile{PFCPriorities: []int{3}, XoffBytes: 262144, XonBytes: 196608,
		ECN: map[int]provision.ECNProfile{3: {KminBytes: kmin, KmaxBytes: 800000, PmaxPercent: 10}}}
}

// fullProfile sets every part of the model, in whole 80-byte cells so that
// NETCONF and SDE switches read back the same bytes.
func fullProfile(kmin int64) *provision.QoSProfile {
	p := qosProfile(kmin)
	p.XoffBytes, p.XonBytes, p.HeadroomBytes = 524320, 393280, 65600
	p.BufferPools = map[string]int64{"lossless": 4194320, "lossy": 6291440}
	p.DSCPToTC = map[int]int{26: 3, 48: 6}
	p.Scheduler, p.DWRRWeights = "dwrr", map[int]int{0: 1, 3: 4}
	return p
}

func outcomes(rs []provision.SwitchResult) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		m[r.Outcome]++
	}
	return m
}

func TestSwitchQoSPlanApplyVerify(t *testing.T) {
	inv, pool, l := emulated(t, "leafspine:4x4:16@100") // 8 switches
	ctx := context.Background()
	plan, err := provision.PlanQoS(ctx, pool, inv, qosProfile(100000))
	if err != nil || len(plan) != 8*4 {
		t.Fatalf("plan: %d changes (want xoff, xon, ECN kmax and pmax on 8 switches): %v", len(plan), err)
	}
	rs, err := provision.ApplyQoS(ctx, pool, inv, qosProfile(100000), false)
	if err != nil || outcomes(rs)["committed"] != 8 {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if again, _ := provision.PlanQoS(ctx, pool, inv, qosProfile(100000)); len(again) != 0 {
		t.Fatalf("a second plan must be empty: %+v", again)
	}
	// one changed ECN threshold: exactly one change per switch
	plan, _ = provision.PlanQoS(ctx, pool, inv, qosProfile(150000))
	if len(plan) != 8 || plan[0].Field != "queue[3].ecn.kmin_bytes" {
		t.Fatalf("changed threshold: %+v", plan)
	}

	// atomic: a commit that fails on one switch rolls every switch back
	before, _ := provision.ReadSwitch(ctx, pool, inv, "leaf1")
	l.FailNext("leaf1", emulator.FaultCommit)
	rs, err = provision.ApplyQoS(ctx, pool, inv, qosProfile(150000), true)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 7 {
		t.Fatalf("atomic with a failing switch: %v %+v", err, rs)
	}
	if plan, _ = provision.PlanQoS(ctx, pool, inv, qosProfile(150000)); len(plan) != 8 {
		t.Fatalf("after an atomic failure every switch keeps its previous config: %d differ", len(plan))
	}

	// not atomic: the others keep the new config, the failing one the old
	l.FailNext("leaf1", emulator.FaultCommit)
	rs, err = provision.ApplyQoS(ctx, pool, inv, qosProfile(150000), false)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["committed"] != 7 {
		t.Fatalf("non-atomic with a failing switch: %v %+v", err, rs)
	}
	plan, _ = provision.PlanQoS(ctx, pool, inv, qosProfile(150000))
	if len(plan) != 1 || plan[0].Switch != "leaf1" || plan[0].From != "100000" {
		t.Fatalf("only leaf1 keeps its old config: %+v", plan)
	}
	if after, _ := provision.ReadSwitch(ctx, pool, inv, "leaf1"); !reflect.DeepEqual(before, after) {
		t.Fatalf("leaf1's read-back config changed:\n%+v\n%+v", before, after)
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
	inv, pool, l := emulatedWith(t, "leafspine:2x2:2@100", func(lab *inventory.Lab) {
		for i := range lab.Switches {
			if i%2 == 0 {
				lab.Switches[i].QoSDriver = "sde"
			}
		}
	}, emulator.Options{})
	ctx := context.Background()
	prof := fullProfile(100000)
	plan, err := provision.PlanQoS(ctx, pool, inv, prof)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range plan {
		per[c.Driver+"/"+c.Field]++
	}
	if per["sde/queue[3].ecn.kmax_bytes"] != 2 || per["netconf/queue[3].ecn.kmax_bytes"] != 2 || per["sde/dscp[26].tc"] != 2 {
		t.Fatalf("plan: %v", per)
	}
	if rs, err := provision.ApplyQoS(ctx, pool, inv, prof, true); err != nil || outcomes(rs)["committed"] != 4 {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if again, err := provision.PlanQoS(ctx, pool, inv, prof); err != nil || len(again) != 0 {
		t.Fatalf("second plan: %v %+v", err, again)
	}
	changed := fullProfile(150000)
	if plan, _ = provision.PlanQoS(ctx, pool, inv, changed); len(plan) != 4 {
		t.Fatalf("one changed threshold: %+v", plan)
	}

	sdeSwitch := inv.Switches[0].Name // sde
	before := map[string]any{}
	for _, sw := range inv.Switches {
		before[sw.Name], _ = provision.ReadSwitch(ctx, pool, inv, sw.Name)
	}
	l.FailNext(sdeSwitch, emulator.FaultCommit)
	rs, err := provision.ApplyQoS(ctx, pool, inv, changed, true)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 3 {
		t.Fatalf("atomic with a failing SDE switch: %v %+v", err, rs)
	}
	for _, r := range rs {
		if r.Switch == sdeSwitch && (!r.Restored || !strings.Contains(r.Error, "device "+sdeSwitch) || !strings.Contains(r.Error, "Hardware error")) {
			t.Errorf("the failure must name the device and what the shell answered, and say it was restored: %+v", r)
		}
	}
	for _, sw := range inv.Switches {
		if after, _ := provision.ReadSwitch(ctx, pool, inv, sw.Name); !reflect.DeepEqual(before[sw.Name], after) {
			t.Errorf("%s (%s) is not on its previous config after an atomic failure", sw.Name, sw.QoSDriver)
		}
	}
	l.FailNext(sdeSwitch, emulator.FaultCommit)
	rs, err = provision.ApplyQoS(ctx, pool, inv, changed, false)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["committed"] != 3 {
		t.Fatalf("non-atomic with a failing SDE switch: %v %+v", err, rs)
	}
	if plan, _ = provision.PlanQoS(ctx, pool, inv, changed); len(plan) != 1 || plan[0].Switch != sdeSwitch {
		t.Fatalf("only the failing switch keeps its old config: %+v", plan)
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
		"xoff_bytes: 524288\nxon_bytes: 393216\nkmin: 1\n":                        "p.yaml: yaml: unmarshal errors:\n  line 3: field kmin not found",
		"pfc_priorities: [3]\nxoff_bytes: 1000\nxon_bytes: 0\npfc_alpha: 0.125\n": "p.yaml:4: pfc_alpha: give either",
	} {
		p := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(p, []byte(doc), 0o644)
		_, err := provision.LoadQoSProfile(p)
		if err == nil || !strings.Contains(err.Error(), filepath.Dir(p)) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "p.yaml")) {
			t.Errorf("%q: got %v, want %s", doc, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "ok.yaml")
	os.WriteFile(p, []byte("pfc_priorities: [3]\npfc_alpha: 0.125\nheadroom_bytes: 65536\nbuffer_pools: {lossless: 4194304, lossy: 6291456}\n"+
		"ecn:\n  3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}\ndscp_to_tc: {26: 3}\nscheduler: dwrr\ndwrr_weights: {3: 4, 0: 1}\n"), 0o644)
	if _, err := provision.LoadQoSProfile(p); err != nil {
		t.Fatal(err)
	}
}
