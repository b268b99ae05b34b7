package inventory

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/qosdriver"
)

// TestUnknownQoSDriverAtFileLine: a switch naming an unknown qos_driver or
// os is reported at its line and field with the known names and the
// nearest; the same registry answers provision (SwitchQoSDriver).
func TestUnknownQoSDriverAtFileLine(t *testing.T) {
	t.Parallel()
	src := `name: q
emulated: true
switches:
  - name: s1
    role: leaf
    qos_driver: sdee
  - name: s2
    role: leaf
    os: bf-sed
  - name: s3
    role: leaf
    os: bf-sde
  - name: s4
    role: leaf
    os: "sonic; reboot"
hosts: []
links: []
`
	lab, err := Parse([]byte(src), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.Validate(); err == nil || strings.Contains(err.Error(), "qos_driver") || !strings.Contains(err.Error(), "q.yaml:15: switches[3].os: unsafe os or model name") {
		t.Errorf("Validate without a registry: %v; want only the unsafe os", err)
	}
	reg := qosdriver.Builtin()
	err = lab.ValidateWith(reg)
	for _, want := range []string{
		`q.yaml:6: switches[0].qos_driver: qos_driver "sdee": unknown switch QoS driver (did you mean "sde"?); known: netconf, openconfig, sde, sonic`,
		`q.yaml:9: switches[1].os: os "bf-sed": unknown switch OS (did you mean "bf-sde"?); known: bf-sde, enterprise-sonic, eos, openconfig, sonic`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateWith: missing %q in:\n%v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "switches[2]") {
		t.Errorf("os bf-sde is known, yet: %v", err)
	}
	if name, err := lab.SwitchQoSDriver(&lab.Switches[2], reg); name != qosdriver.SDE || err != nil {
		t.Errorf("s3 (os bf-sde): %q, %v", name, err)
	}
	if _, err := lab.SwitchQoSDriver(&lab.Switches[1], reg); err == nil || !strings.HasPrefix(err.Error(), `q.yaml:9: switches[1].os: device s2: os "bf-sed"`) {
		t.Errorf("s2 (os bf-sed): %v", err)
	}
}
