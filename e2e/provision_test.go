package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

func TestRunProvisionsBeforeTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx := context.Background()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "qos.yaml"), []byte("pfc_priorities: [3]\nxoff_bytes: 393216\nxon_bytes: 262144\necn:\n  3: {kmin_bytes: 50000, kmax_bytes: 200000, pmax_percent: 10}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "rnic.yaml"), []byte("trust: dscp\npfc_priorities: [3]\nroce_tos: 106\n"), 0o644)
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte(`name: provisioned-incast
provision: {switch_profile: qos.yaml, rnic_profile: rnic.yaml, atomic: true}
traffic:
  - {name: inc, pattern: incast, senders: 4, receiver: h1, bytes: 256KiB}
`), 0o644)
	s, err := scenarios.Load(sc)
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
	for _, f := range []string{"switch-plan.json", "switch-apply.json", "switch-readback.json", "rnic-plan.json", "rnic-apply.json", "rnic-readback.json"} {
		if _, err := os.Stat(filepath.Join(o.Dir, "provision", f)); err != nil {
			t.Errorf("archive lacks provision/%s", f)
		}
	}
	var plan []json.RawMessage
	b, _ := os.ReadFile(filepath.Join(o.Dir, "provision", "switch-plan.json"))
	if json.Unmarshal(b, &plan); len(plan) != 3*5 { // the switches start lossless: xoff, xon and 3 ECN values
		t.Errorf("switch plan recorded %d changes, want 5 on each of 3 switches", len(plan))
	}

	// A switch refuses the (changed) profile: nothing is sent.
	os.WriteFile(filepath.Join(dir, "qos.yaml"), []byte("pfc_priorities: [3]\nxoff_bytes: 262144\nxon_bytes: 196608\n"), 0o644)
	lab.FailNext("spine1", emulator.FaultCommit)
	o, err = run()
	if err == nil {
		t.Fatal("a run whose provisioning failed must fail")
	}
	var m reports.Manifest
	b, _ = os.ReadFile(filepath.Join(o.Dir, "manifest.json"))
	if json.Unmarshal(b, &m); m.Stage != "provision" || m.Outcome != "failed" {
		t.Errorf("manifest: stage %q outcome %q", m.Stage, m.Outcome)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "flows.csv")); err == nil {
		t.Error("traffic was sent after provisioning failed")
	}
}
