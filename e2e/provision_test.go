package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestRunProvisionsBeforeTraffic: a scenario that names profiles gets its
// lab set to them, read back and recorded in the archive before its
// traffic; when a switch refuses the profile, the run sends nothing.
func TestRunProvisionsBeforeTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx := context.Background()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1})
	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("qos.yaml", "pfc_priorities: [3]\nxoff_bytes: 393216\nxon_bytes: 262144\necn:\n  3: {kmin_bytes: 50000, kmax_bytes: 200000, pmax_percent: 10}\n")
	write("rnic.yaml", "trust: dscp\npfc_priorities: [3]\nroce_tos: 106\n")
	write("s.yaml", `name: provisioned-incast
provision: {switch_profile: qos.yaml, rnic_profile: rnic.yaml, atomic: true}
traffic:
  - {name: inc, pattern: incast, senders: 4, receiver: h1, bytes: 256KiB}
`)
	s, err := scenarios.Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*scenarios.Outcome, error) {
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
		return r.Run(ctx, s)
	}
	o, err := run()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.json", "switch-plan.json", "switch-apply.json", "switch-readback.json", "rnic-plan.json", "rnic-apply.json", "rnic-readback.json"} {
		if _, err := os.Stat(filepath.Join(o.Dir, "provision", f)); err != nil {
			t.Errorf("archive lacks provision/%s", f)
		}
	}
	var rep provision.Report
	b, err := os.ReadFile(filepath.Join(o.Dir, "provision", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// every switch differs in xoff, xon and the 3 ECN values (and, if it
	// does not start lossless, in PFC); every host in trust, pfc and ToS
	per := map[string]int{}
	for _, c := range rep.Plan.Switches {
		if c.Field != "priority[3].pfc" {
			per[c.Switch]++
		}
	}
	if len(per) != 3 || per["spine1"] != 5 || per["leaf1"] != 5 || per["leaf2"] != 5 || len(rep.Plan.RNICs) != 18*3 ||
		len(rep.Switches) != 3 || len(rep.RNICs) != 18*3 || rep.Drift.Len() != 0 {
		t.Errorf("report: plan %v switch and %d RNIC changes (want 5 on each of 3 switches, 3 on each of 18 hosts), %d switch results, %d RNIC changes made, drift %+v",
			per, len(rep.Plan.RNICs), len(rep.Switches), len(rep.RNICs), rep.Drift)
	}
	// the lab holds the profiles after the run, and the run sent traffic
	qos, err := provision.LoadQoSProfile(filepath.Join(dir, "qos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if drift, err := provision.Verify(ctx, pool, inv, provision.Intent{Switch: qos}, nil); err != nil {
		t.Errorf("switches after the run: %v %+v", err, drift)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "flows.csv")); err != nil {
		t.Error("no traffic after provisioning")
	}
	// the flows send with the profile's RoCE ToS (perftest --tclass)
	scheds, _ := filepath.Glob(filepath.Join(o.Dir, "raw", "*", "schedule.json"))
	if len(scheds) != 1 {
		t.Fatalf("schedules in the archive: %v", scheds)
	}
	var sched perftest.Schedule
	if b, err = os.ReadFile(scheds[0]); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sched); err != nil || len(sched.Flows) != 4 {
		t.Fatalf("schedule (%v): %d flows", err, len(sched.Flows))
	}
	for _, f := range sched.Flows {
		if f.TClass != 106 || !slices.Contains(perftest.Args(f, perftest.Client), "--tclass=106") {
			t.Errorf("flow %d: traffic class %d, client %v; want the profile's ToS 106", f.ID, f.TClass, perftest.Args(f, perftest.Client))
		}
	}

	// A switch refuses the (changed) profile: nothing is sent.
	write("qos.yaml", "pfc_priorities: [3]\nxoff_bytes: 262144\nxon_bytes: 196608\n")
	if err := lab.FailNext("spine1", emulator.FaultCommit); err != nil {
		t.Fatal(err)
	}
	o, err = run()
	if err == nil {
		t.Fatal("a run whose provisioning failed must fail")
	}
	var m reports.Manifest
	if b, err = os.ReadFile(filepath.Join(o.Dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Stage != "provision" || m.Outcome != "failed" {
		t.Errorf("manifest (%v): stage %q outcome %q", err, m.Stage, m.Outcome)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "flows.csv")); err == nil {
		t.Error("traffic was sent after provisioning failed")
	}
	var results []provision.SwitchResult
	if b, err = os.ReadFile(filepath.Join(o.Dir, "provision", "switch-apply.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &results); err != nil || len(results) != 3 || results[0].Switch != "spine1" || results[0].Outcome != provision.Failed {
		t.Errorf("switch-apply.json (%v): %+v", err, results)
	}
}
