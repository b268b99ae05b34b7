package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// hostScenario writes an RNIC profile and a scenario provisioning it into
// a directory and parses the scenario.
func hostScenario(t *testing.T, profile, extra string) *Scenario {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rnic.yaml"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "name: hosts\nprovision:\n  rnic_profile: rnic.yaml\n" + extra +
		"traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	file := filepath.Join(dir, "s.yaml")
	s, err := Parse([]byte(doc), file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHostModuleOnRealHostsIsRefusedAtPlan: a profile whose host_lb real
// ConnectX firmware cannot run is refused for a hardware lab before
// anything is created, at the scenario's line, saying why.
func TestHostModuleOnRealHostsIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:2x2:4")
	if err != nil {
		t.Fatal(err)
	}
	lab.Emulated = false // as a lab file of real devices
	s := hostScenario(t, "trust: dscp\nhost_lb: hf2t\nhost_lb_params: {flowlet_us: \"25\"}\n", "")
	out := t.TempDir()
	_, err = (&Runner{Lab: lab, OutDir: out}).Run(context.Background(), s)
	want := "s.yaml:3: provision.rnic_profile: lab leafspine:2x2:4 has real hosts: host_lb hf2t: real ConnectX firmware cannot run host module hf2t"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant it to contain %q", err, want)
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("a run directory was created: %v", ents[0].Name())
	}
}

// TestProfileHostModuleReachesTheEmulation: an RNIC profile's host_lb
// becomes the emulation's host module (what an emulated lab starts with),
// per variant when a sweep reaches into the profile; an emulation naming
// another one is refused at its line.
func TestProfileHostModuleReachesTheEmulation(t *testing.T) {
	t.Parallel()
	const profile = "host_lb: hf2t\nhost_lb_params: {flowlet_us: \"25\"}\n"
	vs, err := hostScenario(t, profile, "").Variants()
	if err != nil {
		t.Fatal(err)
	}
	if em := vs[0].Scenario.Emulation; em.HostLB != "hf2t" || em.HostLBParams["flowlet_us"] != "25" {
		t.Errorf("emulation %+v: want hf2t with flowlet_us 25 from the profile", em)
	}
	sweep := "matrix:\n  - path: provision.rnic_profile:host_lb_params.flowlet_us\n    values: [\"10\", \"50\"]\n"
	vs, err = hostScenario(t, profile, sweep).Variants()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Scenario.Emulation.HostLB+":"+v.Scenario.Emulation.HostLBParams["flowlet_us"])
	}
	if strings.Join(got, ",") != "hf2t:10,hf2t:50" {
		t.Errorf("variants' host modules %v, want hf2t:10,hf2t:50", got)
	}
	_, err = hostScenario(t, profile, "emulation: {host_lb: hf2t}\n").Variants()
	if want := "s.yaml:4: emulation.host_lb: hf2t map[], but the RNIC profile (provision.rnic_profile) sets hf2t map[flowlet_us:25]"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %q", err, want)
	}
	if _, err := Parse([]byte("name: x\nemulation: {engine: flow, host_lb: hf2t}\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"), "f.yaml"); err == nil ||
		!strings.Contains(err.Error(), "f.yaml:2: emulation.host_lb: host modules need the packet engine") {
		t.Errorf("host_lb on the flow engine: %v", err)
	}
}

// TestHostModulesAreCheckedAtTheirLine: a host module's problems point at
// the emulation's line, or at the RNIC profile's when the profile names
// the module.
func TestHostModulesAreCheckedAtTheirLine(t *testing.T) {
	t.Parallel()
	check := func(name string, params map[string]string) []tofino.SchemeProblem {
		var out []tofino.SchemeProblem
		if name != "hf2t" {
			out = append(out, tofino.SchemeProblem{Msg: `unknown host module (did you mean "hf2t"?); known: hf2t`})
		}
		if _, bad := params["bogus"]; bad {
			out = append(out, tofino.SchemeProblem{Param: "bogus", Msg: "unknown parameter; hf2t takes flowlet_us"})
		}
		return out
	}
	for _, tc := range []struct{ profile, extra, want string }{
		{"trust: dscp\n", "emulation: {host_lb: hf2x}\n", `s.yaml:4: emulation.host_lb: unknown host module (did you mean "hf2t"?)`},
		{"trust: dscp\n", "emulation: {host_lb: hf2t, host_lb_params: {bogus: \"1\"}}\n", "s.yaml:4: emulation.host_lb_params.bogus: unknown parameter"},
		{"host_lb: hf2x\n", "", `s.yaml:3: provision.rnic_profile: host_lb: unknown host module (did you mean "hf2t"?)`},
		{"host_lb: hf2t\nhost_lb_params: {bogus: \"1\"}\n", "", "s.yaml:3: provision.rnic_profile: host_lb_params.bogus: unknown parameter"},
	} {
		err := CheckHostModules(hostScenario(t, tc.profile, tc.extra), check)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: err = %v\nwant it to contain %q", tc.profile, tc.extra, err, tc.want)
		}
	}
	if err := CheckHostModules(hostScenario(t, "host_lb: hf2t\n", ""), check); err != nil {
		t.Errorf("a good module: %v", err)
	}
}
