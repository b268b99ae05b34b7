package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestRunActivatesTheScenarioImage: a scenario naming a switch image runs
// with that image on every switch (and its LB scheme in the twin); when the
// image fails to start on one switch, the run stops before traffic.
func TestRunActivatesTheScenarioImage(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx := context.Background()
	inv, pool, agent, lab := emulatedLabWith(t, "leafspine:1x2:4@100", emulator.Options{Seed: 1, Engine: "packet"})
	dir := t.TempDir()
	write := func(version, scheme string, params map[string]string) {
		if _, err := tofino.WriteBundle(filepath.Join(dir, "img-"+version), tofino.BundleSpec{Name: "lb", Version: version,
			Program: "lb_" + scheme, LB: tofino.LB{Scheme: scheme, Params: params}}); err != nil {
			t.Fatal(err)
		}
	}
	write("1", "drill", map[string]string{"d": "2", "m": "1"})
	write("2", "letflow", nil)
	scenario := func(version string) *scenarios.Scenario {
		p := filepath.Join(dir, "s"+version+".yaml")
		if err := os.WriteFile(p, []byte("name: imaged-incast\nprovision: {image: img-"+version+"}\ntraffic:\n"+
			"  - {name: inc, pattern: incast, senders: 4, receiver: h1, bytes: 256KiB}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := scenarios.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s *scenarios.Scenario) (*scenarios.Outcome, error) {
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
		return r.Run(ctx, s)
	}

	o, err := run(scenario("1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"image-plan.json", "image-apply.json", "image-readback.json"} {
		if _, err := os.Stat(filepath.Join(o.Dir, "provision", f)); err != nil {
			t.Errorf("archive lacks provision/%s", f)
		}
	}
	var readback []tofino.Status
	b, _ := os.ReadFile(filepath.Join(o.Dir, "provision", "image-readback.json"))
	if err := json.Unmarshal(b, &readback); err != nil || len(readback) != 3 {
		t.Errorf("read-back: %v %+v", err, readback)
	}
	for _, s := range readback {
		if s.Active != "lb@1" || !s.Healthy {
			t.Errorf("read-back of %s: %+v", s.Switch, s)
		}
	}
	if scheme, params := lab.FabricLB(); scheme != "drill" || params["d"] != "2" {
		t.Errorf("the twin forwards with %q %v, not the image's drill", scheme, params)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "flows.csv")); err != nil {
		t.Error("no traffic after a good image")
	}

	// lb@2 cannot start on spine1: no traffic
	if err := lab.FailNext("spine1", emulator.FaultImageStart); err != nil {
		t.Fatal(err)
	}
	o, err = run(scenario("2"))
	if err == nil {
		t.Fatal("a run whose image failed to activate must fail")
	}
	var m reports.Manifest
	b, _ = os.ReadFile(filepath.Join(o.Dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil || m.Stage != "provision" || m.Outcome != "failed" {
		t.Errorf("manifest (%v): stage %q outcome %q", err, m.Stage, m.Outcome)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "flows.csv")); err == nil {
		t.Error("traffic was sent after the image failed to activate")
	}
	var applied []tofino.Result
	b, _ = os.ReadFile(filepath.Join(o.Dir, "provision", "image-apply.json"))
	if err := json.Unmarshal(b, &applied); err != nil || len(applied) != 3 {
		t.Fatalf("image-apply.json: %v %+v", err, applied)
	}
	for _, r := range applied {
		if want := map[bool]string{true: tofino.RolledBack, false: tofino.Activated}[r.Switch == "spine1"]; r.Outcome != want {
			t.Errorf("image-apply.json: %s %s, want %s", r.Switch, r.Outcome, want)
		}
	}
}
