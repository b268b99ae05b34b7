package provision_test

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/provision"
)

func qosProfile(kmin int64) *provision.QoSProfile {
	return &provision.QoSProfile{PFCPriorities: []int{3}, XoffBytes: 524288, XonBytes: 393216,
		ECN: map[int]provision.ECNProfile{3: {KminBytes: kmin, KmaxBytes: 400000, PmaxPercent: 20}}}
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
	if err != nil || len(plan) != 8*6 {
		t.Fatalf("plan: %d changes (want pfc, xoff, xon and 3 ECN values on 8 switches): %v", len(plan), err)
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
	l.NETCONF("leaf1").FailNextCommit()
	rs, err = provision.ApplyQoS(ctx, pool, inv, qosProfile(150000), true)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 7 {
		t.Fatalf("atomic with a failing switch: %v %+v", err, rs)
	}
	if plan, _ = provision.PlanQoS(ctx, pool, inv, qosProfile(150000)); len(plan) != 8 {
		t.Fatalf("after an atomic failure every switch keeps its previous config: %d differ", len(plan))
	}

	// not atomic: the others keep the new config, the failing one the old
	l.NETCONF("leaf1").FailNextCommit()
	rs, err = provision.ApplyQoS(ctx, pool, inv, qosProfile(150000), false)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["committed"] != 7 {
		t.Fatalf("non-atomic with a failing switch: %v %+v", err, rs)
	}
	plan, _ = provision.PlanQoS(ctx, pool, inv, qosProfile(150000))
	if len(plan) != 1 || plan[0].Switch != "leaf1" || plan[0].From != "100000" {
		t.Fatalf("only leaf1 keeps its old config: %+v", plan)
	}
	for _, r := range rs {
		if r.Switch == "leaf1" && (r.Error == "" || !strings.Contains(r.Error, "leaf1") || !strings.Contains(r.Error, "operation-failed")) {
			t.Errorf("the failure must name the device and the rpc-error: %+v", r)
		}
	}
}
