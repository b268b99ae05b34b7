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

// A change is a rebuild from the defaults, not an update of the fields the
// new configuration holds: going back to a configuration (a confirmed
// commit's rollback, an SDE restore) gives back exactly the twin it had,
// and a queue without ECN marks nothing.
func TestTwinIsRebuiltOnEveryChange(t *testing.T) {
	pe := fabric.NewPacketEngine(mustTopo(t), fabric.DefaultConfig())
	tw := newTwin(pe, map[string]publisher{}, nil)
	if err := tw.configure("leaf1", defaultQoS(1)); err != nil {
		t.Fatal(err)
	}
	if c, _ := pe.SwitchConfigOf("leaf1"); c != fabric.DefaultConfig().SwitchConfig {
		t.Fatalf("the default QoS is not the twin's default:\n%+v\n%+v", c, fabric.DefaultConfig().SwitchConfig)
	}
	lossy := switchqos.Config{Alpha: 0.25, HeadroomBytes: 1 << 20, Scheduler: switchqos.DWRR, Weights: map[int]int{3: 4},
		Pools: map[string]int64{switchqos.PoolLossless: 1 << 20, switchqos.PoolLossy: 2 << 20}}
	if err := tw.configure("leaf1", lossy); err != nil {
		t.Fatal(err)
	}
	if c, _ := pe.SwitchConfigOf("leaf1"); c.PFC || c.ECNKmaxBytes != 0 || c.BufferBytes != 3<<20 || c.Scheduler != "dwrr" {
		t.Fatalf("leaf1 after a lossy config without ECN: %+v", c)
	}
	if err := tw.configure("leaf1", defaultQoS(1)); err != nil {
		t.Fatal(err)
	}
	if c, _ := pe.SwitchConfigOf("leaf1"); c != fabric.DefaultConfig().SwitchConfig {
		t.Errorf("back on the default QoS, the twin is not back on its default:\n%+v", c)
	}
}

// defaultQoS is a configuration the emulated switches accept, in whole
// cells for a Tofino's 80-byte cells, with the twin's lossless priority.
func TestDefaultQoSFitsTheSwitches(t *testing.T) {
	for _, cell := range []int64{1, 80} {
		q := defaultQoS(cell)
		if ps := q.Check(switchBufferBytes()); len(ps) != 0 {
			t.Errorf("cell %d: %v", cell, ps)
		}
		if !q.PFC[roceQueue] || q.PFCMask() != 1<<roceQueue || q.Quantize(cell).XoffBytes != q.XoffBytes ||
			(q.Pools[switchqos.PoolLossless]+q.Pools[switchqos.PoolLossy])/cell > switchBufferBytes()/cell {
			t.Errorf("cell %d: %+v", cell, q)
		}
	}
}
