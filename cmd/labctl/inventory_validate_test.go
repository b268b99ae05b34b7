package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInventoryValidateAsksTheRegistries: inventory validate checks a
// lab's QoS driver, engine, switch module and host module names against
// the registries the emulator and provision use, each at its line with
// the nearest known name.
func TestInventoryValidateAsksTheRegistries(t *testing.T) {
	data, err := os.ReadFile("testdata/lab-qos-models.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), "    os: enterprise-sonic\n", "    qos_driver: opencofnig\n", 1) +
		"emulation:\n  engine: pakcet\n  lb: drll\n  host_lb: hf2\n"
	bad := writeFile(t, "lab.yaml", src)
	_, stderr, err := labctl(t, t.TempDir(), "inventory", "validate", bad)
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("validate: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		bad + `:11: switches[1].qos_driver: qos_driver "opencofnig": unknown switch QoS driver (did you mean "openconfig"?)`,
		`: emulation.engine: "pakcet": unknown engine (did you mean "packet"?); known: flow, packet`,
		`: emulation.lb: unknown load-balancing scheme (did you mean "drill"?)`,
		`: emulation.host_lb: unknown host module (did you mean "hf2t"?)`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
	good := writeFile(t, "good.yaml", string(data)+"emulation:\n  engine: packet\n  lb: drill\n  host_lb: hf2t\n")
	if out, stderr, err := labctl(t, t.TempDir(), "inventory", "validate", good); err != nil || !strings.Contains(out, "ok") {
		t.Errorf("validate of known names: %v\n%s%s", err, out, stderr)
	}
}
