package emulator

import (
	"testing"

	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/emulator/fabric"
)

// A switch's committed QoS reaches that switch of the packet engine alone;
// the flow engine, with one configuration for the fabric, takes it whole.
func TestCommittedQoSIsPerSwitch(t *testing.T) {
	pe := fabric.NewPacketEngine(mustTopo(t), fabric.DefaultConfig())
	tw := newTwin(pe, map[string]publisher{}, nil)
	q := switchqos.Config{XoffBytes: 300_000, ECN: map[int]switchqos.ECN{3: {KminBytes: 50_000, KmaxBytes: 200_000, PmaxPercent: 10}}}
	if err := tw.configure("leaf1", q); err != nil {
		t.Fatal(err)
	}
	l1, _ := pe.SwitchConfigOf("leaf1")
	l2, ok := pe.SwitchConfigOf("spine1")
	if l1.PFC || l1.XoffBytes != 300_000 || l1.ECNKminBytes != 50_000 || l1.ECNPmax != 0.1 {
		t.Errorf("leaf1 after its commit (no PFC priority, XOFF 300 KB, ECN 50/200 KB 10%%): %+v", l1)
	}
	if def := fabric.DefaultConfig().SwitchConfig; !ok || l2 != def {
		t.Errorf("spine1 changed with leaf1's commit: %+v", l2)
	}
	if err := tw.configure("nonesuch", q); err == nil {
		t.Error("a commit on an unknown switch must be reported")
	}

	fe := fabric.NewFlowEngine(mustTopo(t), fabric.DefaultConfig())
	if err := newTwin(fe, map[string]publisher{}, nil).configure("leaf1", q); err != nil {
		t.Fatal(err)
	}
	if c := fe.Config(); c.PFC || c.XoffBytes != 300_000 {
		t.Errorf("flow engine after a commit: %+v", c.SwitchConfig)
	}
}
