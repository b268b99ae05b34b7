package inventory_test

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// twinRegistries are the registries the CLI passes.
func twinRegistries() inventory.Registries { return emulator.Registries() }

const emulatedLab = `name: e
emulated: true
switches: [{name: s1, role: leaf}]
hosts: []
links: []
`

// TestEmulationNamesAtFileLine: an emulated lab's engine and modules are
// checked against the twin's registries, each unknown name or parameter
// at its line with the known names and the nearest.
func TestEmulationNamesAtFileLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		emulation string
		want      []string
	}{
		{"emulation:\n  engine: flwo\n", []string{`e.yaml:7: emulation.engine: "flwo": unknown engine (did you mean "flow"?); known: flow, packet`}},
		{"emulation:\n  lb: conwave\n", []string{`e.yaml:7: emulation.lb: unknown load-balancing scheme (did you mean "conweave"?); known: `}},
		{"emulation:\n  lb: drill\n  lb_params: {dd: \"2\"}\n", []string{`e.yaml:8: emulation.lb_params.dd: unknown parameter (did you mean "d"?)`}},
		{"emulation:\n  host_lb: hf2x\n", []string{`e.yaml:7: emulation.host_lb: unknown host module (did you mean "hf2t"?); known: flbrc, hf2t`}},
		{"emulation:\n  engine: flow\n  host_lb: hf2t\n", []string{`e.yaml:8: emulation.host_lb: host_lb hf2t needs an engine that simulates packets (engine flow does not)`}},
		{"emulation:\n  lb_params: {d: \"2\"}\n", []string{`emulation.lb_params: parameters without lb`}},
	} {
		lab, err := inventory.Parse([]byte(emulatedLab+tc.emulation), "e.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.emulation, err)
		}
		err = lab.ValidateAgainst(twinRegistries())
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: missing %q in:\n%v", tc.emulation, w, err)
			}
		}
	}
	ok, err := inventory.Parse([]byte(emulatedLab+"emulation:\n  engine: packet\n  lb: drill\n  lb_params: {d: \"2\"}\n  host_lb: hf2t\n"), "e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.ValidateAgainst(twinRegistries()); err != nil {
		t.Errorf("known names refused: %v", err)
	}
	hw, err := inventory.Parse([]byte(strings.Replace(emulatedLab, "emulated: true\n", "", 1)+"emulation: {engine: flow}\n"), "e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := hw.ValidateAgainst(twinRegistries()); err == nil || !strings.Contains(err.Error(), "emulation: only an emulated lab") {
		t.Errorf("a hardware lab with a twin section: %v", err)
	}
}
