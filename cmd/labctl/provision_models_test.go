package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// provision apply on a lab whose switches' os: picks three QoS models
// (leaf1 SONiC, leaf2 OpenConfig, spine1 NETCONF): every switch commits
// through its driver and a plan afterwards has nothing to change.
func TestProvisionApplyByOS(t *testing.T) {
	const lab = "testdata/lab-qos-models.yaml"
	home := upLab(t, lab)
	qos := writeFile(t, "qos.yaml", qosYAML)
	out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos, "--json")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, stderr)
	}
	var rep struct {
		Switches []struct{ Switch, Driver, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, s := range rep.Switches {
		got[s.Switch] = s.Driver + " " + s.Outcome
	}
	want := map[string]string{"leaf1": "sonic committed", "leaf2": "openconfig committed", "spine1": "netconf committed"}
	for sw, w := range want {
		if got[sw] != w {
			t.Errorf("%s: %q, want %q (all: %v)", sw, got[sw], w, got)
		}
	}
	out, stderr, err = labctl(t, home, "provision", "plan", "--lab", lab, "--switch-profile", qos, "--json")
	if err != nil || strings.Contains(out, `"field"`) {
		t.Errorf("plan after apply: %v %s\n%s", err, stderr, out)
	}
}

// inventory validate answers an unknown os: at its line, with the
// nearest known one.
func TestInventoryValidateUnknownOS(t *testing.T) {
	data, err := os.ReadFile("testdata/lab-qos-models.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := writeFile(t, "lab.yaml", strings.Replace(string(data), "os: sonic\n", "os: sonik\n", 1))
	_, stderr, err := labctl(t, t.TempDir(), "inventory", "validate", bad)
	want := bad + `:7: switches[0].os: os "sonik": unknown switch OS (did you mean "sonic"?)`
	if _, ok := err.(*exec.ExitError); !ok || !strings.Contains(stderr, want) {
		t.Errorf("validate: %v\n%s\nwant %s", err, stderr, want)
	}
}
