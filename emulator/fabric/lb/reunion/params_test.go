package reunion

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestParams: the registry takes the paper's settings and its robustness
// range and refuses values outside each parameter's rule; every
// parameter has help and a default; the defaults give the paper's sketch.
func TestParams(t *testing.T) {
	t.Parallel()
	lbtest.CheckParams(t, Register, "reunion",
		[]string{"", "interval_us=250", "interval_us=2500,tolerance=4", "high_util=gt", "cms_decay=0", "cms_decay=1", "cms_epsilon=0.01,cms_delta=0.5"},
		[]string{"interval_us=0", "tolerance=0", "tolerance=1.5", "high_util=eq", "cms_decay=1.5", "cms_epsilon=0", "cms_delta=2", "ctrl_bytes=10"})
	m := newModule(t, nil)
	if w, d := sketchSize(m.eps, m.delta); w != 2000 || d != 7 || m.t != 1 || m.intervalNs != 1_000_000 || m.gt {
		t.Errorf("defaults: sketch %d x %d, t %d, s %d ns, gt %v", w, d, m.t, m.intervalNs, m.gt)
	}
}
