package emulator

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
)

func TestSysfsWritesReachTheTwin(t *testing.T) {
	e := &fakeSession{}
	l := &Lab{}
	eng := fabric.NewFlowEngine(mustTopo(t), fabric.DefaultConfig())
	l.twin = newTwin(eng, map[string]publisher{}, nil)
	h := newHost(l, mustHost(t), t.TempDir())
	if st := h.echoTo("100", "/sys/class/net/ens1f0/ecn/roce_rp/rpg_time_reset", e.session()); st != 0 {
		t.Fatalf("echo: %d %s", st, e.err.String())
	}
	if got := eng.Config().DCQCN.RPGTimeResetNs; got != 100_000 {
		t.Errorf("rpg_time_reset 100 us reached the twin as %d ns", got)
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_np/enable/3", e.session())
	if !eng.Config().DCQCN.Enabled {
		t.Error("a notification-point enable must not switch the reaction point off")
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_rp/enable/3", e.session())
	if eng.Config().DCQCN.Enabled {
		t.Error("disabling the reaction point on priority 3 must disable DCQCN in the twin")
	}
	if st := h.echoTo("1", "/sys/class/net/ens1f0/ecn/roce_rp/nonesuch", e.session()); st == 0 {
		t.Error("sysfs files cannot be created")
	}
	if st := h.echoTo("x", "/sys/class/net/ens1f0/ecn/roce_rp/rpg_ai_rate", e.session()); st == 0 {
		t.Error("a non-integer value must be refused")
	}
}
