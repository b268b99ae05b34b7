package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

// TestSwitchProfileChangesTheTwin: the switches and the fabric twin agree
// on QoS. A fresh lab reads back what it behaves as (lossless, the twin's
// default thresholds and marking), and the shipped incast on it is
// lossless with PAUSE frames. An --atomic apply that one switch refuses
// rolls every switch back and leaves the twin as it was: the same incast
// again. A profile committed everywhere with PFC off and no ECN marking
// (so DCQCN cannot slow the senders) makes the same incast overflow the
// buffer: drops and no PAUSE in the report.
func TestSwitchProfileChangesTheTwin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1, Engine: "packet"})
	s, err := scenarios.Load("incast")
	if err != nil {
		t.Fatal(err)
	}
	run := func() (drops, pfc uint64) { return dropsAndPauses(ctx, t, inv, pool, agent, s) }
	lossless := &provision.QoSProfile{PFCPriorities: []int{3}, XoffBytes: 512 << 10, XonBytes: 384 << 10,
		ECN: map[int]provision.OrOff[provision.ECNProfile]{3: provision.Set(provision.ECNProfile{KminBytes: 100_000, KmaxBytes: 400_000, PmaxPercent: 20})}}
	if plan, err := provision.PlanSwitches(ctx, pool, inv, lossless, nil); err != nil || len(plan.Changes) != 0 {
		t.Fatalf("a fresh lab must read back the twin's lossless defaults: %v %+v", err, plan)
	}
	drops, pfc := run()
	if drops != 0 || pfc == 0 {
		t.Fatalf("fresh lab: %d drops, %d PAUSE frames; want a lossless incast with PAUSE", drops, pfc)
	}

	lossy := &provision.QoSProfile{XoffBytes: 524288, XonBytes: 393216,
		ECN: map[int]provision.OrOff[provision.ECNProfile]{3: {Off: true}}} // no ECN marking on the RoCE queue
	if err := lab.FailNext("leaf2", emulator.FaultCommit); err != nil {
		t.Fatal(err)
	}
	rs, err := provision.ApplySwitches(ctx, pool, inv, lossy, true, nil)
	if err == nil || len(rs) != 3 {
		t.Fatalf("an atomic apply that leaf2 refuses must fail: %v %+v", err, rs)
	}
	for _, r := range rs {
		if want := map[bool]string{true: "failed", false: "rolled-back"}[r.Switch == "leaf2"]; r.Outcome != want {
			t.Errorf("%s: outcome %q, want %q", r.Switch, r.Outcome, want)
		}
	}
	if plan, err := provision.PlanSwitches(ctx, pool, inv, lossless, nil); err != nil || len(plan.Changes) != 0 {
		t.Fatalf("after the rollback the switches must be back on the defaults: %v %+v", err, plan)
	}
	// The same incast again: still lossless with PAUSE. (Not the same count:
	// the twin's ECN marking draws on one random stream over its runs, and
	// with a CNP per marked packet the PAUSE count follows the marks.)
	if d, p := run(); d != 0 || p == 0 {
		t.Fatalf("after a rolled-back apply: %d drops, %d PAUSE frames; want the twin unchanged: no drops, PAUSE (fresh lab: %d, %d)", d, p, drops, pfc)
	}

	if rs, err := provision.ApplySwitches(ctx, pool, inv, lossy, true, nil); err != nil {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if drops, pfc := run(); drops == 0 || pfc != 0 {
		t.Fatalf("without PFC: %d drops, %d PAUSE frames; want drops and no PAUSE", drops, pfc)
	}
}

// TestDSCPMismatchMakesTheIncastLossy: the switches classify by DSCP
// (dscp_to_tc {26: 3}, PFC and ECN on class 3) and the RNICs' RoCE ToS
// reaches the flows (perftest --tclass). With ToS 106 (DSCP 26) the
// shipped incast is lossless with PAUSE frames; with ToS 98 (DSCP 24,
// which the map does not name) the same incast lands in class 0: no PFC,
// no ECN, so no DCQCN, and the buffer overflows: drops in the report.
func TestDSCPMismatchMakesTheIncastLossy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agent, _ := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1})
	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("qos.yaml", "pfc_priorities: [3]\ndscp_to_tc: {26: 3}\necn:\n  3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}\n")
	run := func(tos int) (drops, pfc uint64) {
		t.Helper()
		write("rnic.yaml", fmt.Sprintf("trust: dscp\npfc_priorities: [3]\nroce_tos: %d\n", tos))
		write("s.yaml", `name: dscp-incast
provision: {switch_profile: qos.yaml, rnic_profile: rnic.yaml}
traffic:
  - {name: incast-16to1, pattern: incast, senders: 16, receiver: h1, bytes: 1MiB, msg_size: 64KiB}
`)
		s, err := scenarios.Load(filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return dropsAndPauses(ctx, t, inv, pool, agent, s)
	}
	if drops, pfc := run(106); drops != 0 || pfc == 0 {
		t.Errorf("ToS 106 (DSCP 26, mapped to the lossless class): %d drops, %d PAUSE frames; want none and some", drops, pfc)
	}
	if drops, pfc := run(98); drops == 0 || pfc != 0 {
		t.Errorf("ToS 98 (DSCP 24, unmapped: class 0): %d drops, %d PAUSE frames; want drops and no PAUSE", drops, pfc)
	}
}
