package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// emulatedLabs is a scenarios.LabSource that starts a generated emulated
// lab per Open, as the CLI does, and counts what it opened.
type emulatedLabs struct {
	t     *testing.T
	mu    sync.Mutex
	opens []string
}

func (l *emulatedLabs) Open(ctx context.Context, name string, em scenarios.Emulation) (*inventory.Lab, func(), error) {
	src, err := inventory.Generate(name)
	if err != nil {
		return nil, nil, err
	}
	lab, err := emulator.Start(ctx, src, emulator.Options{Dir: l.t.TempDir(), Seed: 1,
		Engine: em.Engine, LB: em.LB, LBParams: em.LBParams, Transport: em.Transport})
	if err != nil {
		return nil, nil, err
	}
	if err := lab.SetHostLB(em.HostLB, em.HostLBParams); err != nil { // as labctl lab does
		lab.Close()
		return nil, nil, err
	}
	l.mu.Lock()
	l.opens = append(l.opens, name+" "+em.LB)
	l.mu.Unlock()
	return lab.Inventory(), func() { lab.Close() }, nil
}

func readManifest(t *testing.T, dir string) reports.Manifest {
	t.Helper()
	var m reports.Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMatrixFailedVariantsAreRecorded: in a matrix over a switch profile and
// the incast's senders, the variant that wants more senders than the lab
// has fails at planning, the variants with a broken profile fail at
// provisioning (and send nothing), and the one good variant runs; the run
// is partial, its report covers the good point, and every point is in the
// manifest with its status.
func TestMatrixFailedVariantsAreRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("pfc_priorities: [3]\nxoff_bytes: 524288\nxon_bytes: 393216\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("pfc_priorities: [9]\n"), 0o644)
	sc := filepath.Join(dir, "m.yaml")
	os.WriteFile(sc, []byte(`name: failing-matrix
lab: leafspine:1x2:3@100
traffic:
  - {name: w, pattern: workload, cdf: websearch, load: 0.3, duration: 200us}
matrix:
  - path: provision.switch_profile
    values: [ok.yaml, broken.yaml]
  - path: traffic[0].duration   # a 1ns window holds no flow: it fails at planning
    values: [200us, 1ns]
`), 0o644)
	s, err := scenarios.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	labs := &emulatedLabs{t: t}
	r := &scenarios.Runner{Labs: labs, OutDir: t.TempDir(), AgentPath: fakeAgent(t)}
	out, err := r.Run(context.Background(), s)
	if !errors.Is(err, scenarios.ErrPartial) || out == nil || out.Outcome != scenarios.OutcomePartial {
		t.Fatalf("want a partial run, got %v (%+v)", err, out)
	}
	if len(labs.opens) != 1 {
		t.Errorf("variants that share lab and emulation must share one lab; opened %v", labs.opens)
	}
	m := readManifest(t, out.Dir)
	if m.Outcome != scenarios.OutcomePartial || m.Stage != "done" || !strings.Contains(m.Error, "3 of 4 points failed") {
		t.Errorf("manifest: outcome %q stage %q error %q", m.Outcome, m.Stage, m.Error)
	}
	want := []struct{ name, status, err string }{
		{"w/switch_profile=ok/duration=200us", "ok", ""},
		{"w/switch_profile=ok/duration=1ns", "failed", "plan:switch_profile=ok/duration=1ns: point w/switch_profile=ok/duration=1ns: workload: none of 10000 draws of a 1ns window"},
		{"w/switch_profile=broken/duration=200us", "failed", "provision:switch_profile=broken/duration=200us: " + filepath.Join(dir, "broken.yaml") + ":1: pfc_priorities[0]: 9 is not a priority"},
		{"w/switch_profile=broken/duration=1ns", "failed", "none of 10000 draws of a 1ns window"},
	}
	if len(m.Points) != len(want) {
		t.Fatalf("%d points in the manifest, want %d", len(m.Points), len(want))
	}
	for i, w := range want {
		p := m.Points[i]
		if p.Name != w.name || p.Status != w.status || !strings.Contains(p.Error, w.err) || (w.err == "") != (p.Error == "") {
			t.Errorf("point %d: %q %q %q\n want %q %q %q", i, p.Name, p.Status, p.Error, w.name, w.status, w.err)
		}
		if p.Params["duration"] == nil || p.Params["switch_profile"] == nil || p.Lab != "leafspine:1x2:3@100" {
			t.Errorf("point %s: params %v lab %q", p.Name, p.Params, p.Lab)
		}
	}
	if m.Points[0].Flows == 0 || m.Points[0].EndNs == 0 {
		t.Errorf("the good point did not run: %+v", m.Points[0])
	}
	var rows []reports.FlowRow
	f, _ := os.Open(filepath.Join(out.Dir, "flows.csv"))
	defer f.Close()
	if err := reports.ReadFlowsCSV(f, func(r reports.FlowRow) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Point != want[0].name {
			t.Errorf("flows.csv has a flow of %s, which sent nothing", r.Point)
		}
	}
	if len(rows) != m.Points[0].Flows || out.Summary == nil || out.Report == "" {
		t.Errorf("%d flows, summary %v, report %q", len(rows), out.Summary != nil, out.Report)
	}
	for _, d := range []string{"switch_profile=ok_duration=200us", "switch_profile=broken_duration=200us"} {
		if _, err := os.Stat(filepath.Join(out.Dir, "provision", d)); err != nil {
			t.Errorf("no provision record of variant %s", d)
		}
	}
}

// TestPlainScenarioFailsAsBefore: a scenario without a matrix whose only
// point fails (at planning: a 1ns window holds no flow) is a failed run
// that stops where it failed.
func TestPlainScenarioFailsAsBefore(t *testing.T) {
	s, err := scenarios.Parse([]byte("name: x\ntraffic:\n  - {pattern: workload, cdf: websearch, load: 0.3, duration: 1ns}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, pool, agent := emulatedLab(t, "leafspine:1x2:2@100")
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, PointTimeout: time.Minute}
	out, err := r.Run(context.Background(), s)
	if err == nil || errors.Is(err, scenarios.ErrPartial) || out.Outcome != scenarios.OutcomeFailed {
		t.Fatalf("want a failed run, got %v", err)
	}
	if m := readManifest(t, out.Dir); m.Stage != "plan" || m.Outcome != "failed" || len(m.Points) != 1 || m.Points[0].Status != "failed" {
		t.Errorf("manifest: stage %q outcome %q points %+v", m.Stage, m.Outcome, m.Points)
	}
}

func fakeAgent(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "labctl")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatrixOverLabsRecordsEveryLab: a matrix that sweeps the lab records
// every lab its points ran on in the manifest (Labs, by name, credential
// references only), and each point names its own.
func TestMatrixOverLabsRecordsEveryLab(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s, err := scenarios.Parse([]byte(`name: labs
traffic:
  - {name: inc, pattern: incast, senders: 1, receiver: h1, bytes: 64KiB}
matrix:
  - path: lab
    values: ["leafspine:1x2:2@100", "leafspine:1x2:3@100"]
`), "labs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Runner{Labs: &emulatedLabs{t: t}, OutDir: t.TempDir(), AgentPath: fakeAgent(t), PointTimeout: time.Minute}
	out, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, out.Dir)
	hosts := map[string]int{"leafspine:1x2:2@100": 4, "leafspine:1x2:3@100": 6}
	if len(m.Labs) != 2 || m.Lab == nil || m.Lab.Name != "leafspine:1x2:2@100" {
		t.Fatalf("manifest labs %v, lab %v", m.Labs, m.Lab)
	}
	for name, n := range hosts {
		if l := m.Labs[name]; l == nil || l.Name != name || len(l.Hosts) != n {
			t.Errorf("lab %s: %+v", name, l)
		}
	}
	if len(m.Points) != 2 || m.Points[0].Lab != "leafspine:1x2:2@100" || m.Points[1].Lab != "leafspine:1x2:3@100" {
		t.Errorf("points: %+v", m.Points)
	}
	b, _ := os.ReadFile(filepath.Join(out.Dir, "manifest.json"))
	if strings.Contains(string(b), "BEGIN OPENSSH PRIVATE KEY") {
		t.Error("the manifest holds a secret")
	}
}

// TestPointTimeoutStopsASimulation: a point whose simulation runs far past
// --point-timeout fails at its timeout, and the simulation is cut short
// instead of holding the twin, so the next point runs.
func TestPointTimeoutStopsASimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s, err := scenarios.Parse([]byte(`name: runaway
traffic:
  - {name: huge, pattern: incast, senders: 2, receiver: h1, bytes: 100GiB}
  - {name: small, pattern: incast, senders: 2, receiver: h1, bytes: 256KiB}
`), "runaway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, pool, agent := emulatedLab(t, "leafspine:1x2:3@100")
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, PointTimeout: 4 * time.Second}
	out, err := r.Run(context.Background(), s)
	if !errors.Is(err, scenarios.ErrPartial) {
		t.Fatalf("want a partial run, got %v", err)
	}
	m := readManifest(t, out.Dir)
	if len(m.Points) != 2 {
		t.Fatalf("points %+v", m.Points)
	}
	if huge := m.Points[0]; huge.Status != "failed" || !strings.Contains(huge.Error, "deadline") {
		t.Errorf("the runaway point must fail at its timeout: %s %q", huge.Status, huge.Error)
	}
	if small := m.Points[1]; small.Status != "ok" || small.EndNs == 0 {
		t.Errorf("the next point must run: %s %q", small.Status, small.Error)
	}
	// The simulation stopped: the fabric never carried the runaway
	// point's bytes (2 x 100 GiB into h1), by the switches' own counters.
	var most uint64
	err = collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "port.lp"), func(p collectors.Point) error {
		if v, ok := collectors.Uint(p.Fields["tx_bytes"]); ok {
			most = max(most, v)
		}
		return nil
	})
	if err != nil || most == 0 {
		t.Fatalf("no port telemetry: %v", err)
	}
	if most >= 100<<30 {
		t.Errorf("a switch port sent %d bytes: the runaway simulation ran on after its point timed out", most)
	}
}
