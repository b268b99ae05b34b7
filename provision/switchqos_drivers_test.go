package provision

import (
	"testing"

	"github.com/labctl/labctl/drivers/qosdriver"
)

// TestEveryDriverOpens: each driver the registry knows has a session
// here, and nothing here is unknown to the registry.
func TestEveryDriverOpens(t *testing.T) {
	t.Parallel()
	reg, open := qosdriver.Builtin(), openers()
	for _, name := range reg.Names() {
		if open[name] == nil {
			t.Errorf("driver %s is registered but has no session in provision", name)
		}
	}
	for name := range open {
		if _, err := reg.Lookup(name); err != nil {
			t.Errorf("provision opens %s: %v", name, err)
		}
	}
}
