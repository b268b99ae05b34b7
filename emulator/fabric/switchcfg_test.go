package fabric

import (
	"fmt"
	"strings"
	"testing"
)

// TestConfigureSwitchIsPerSwitch: leaf1 loses PFC and most of its buffer,
// leaf2 keeps the defaults. The same incast on each leaf then drops on
// leaf1 only and is held lossless by PAUSE on leaf2. An RNIC-side change
// (Configure without touching switch settings) keeps per-switch settings.
func TestConfigureSwitchIsPerSwitch(t *testing.T) {
	topo := generated(t, "leafspine:2x4:8@100")
	e := NewPacketEngine(topo, DefaultConfig())
	if err := e.ConfigureSwitch("leaf1", func(c *SwitchConfig) { c.PFC, c.BufferBytes = false, 1<<20 }); err != nil {
		t.Fatal(err)
	}
	e.Configure(func(c *Config) { c.DCQCN.Enabled = false }) // so that queues build
	if c, _ := e.SwitchConfigOf("leaf1"); c.PFC {
		t.Fatal("Configure of RNIC settings undid leaf1's own settings")
	}
	if c, _ := e.SwitchConfigOf("leaf2"); !c.PFC || c.BufferBytes != 12<<20 {
		t.Fatalf("leaf2 changed with leaf1: %+v", c)
	}
	if err := e.ConfigureSwitch("leaf9", func(*SwitchConfig) {}); err == nil || !strings.Contains(err.Error(), "leaf9") {
		t.Errorf("an unknown switch: %v", err)
	}
	var flows []Flow
	for i := 0; i < 7; i++ { // h2..h8 into h1 on leaf1; h10..h16 into h9 on leaf2
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", i+2), Dst: "h1", Bytes: mib},
			Flow{ID: 10 + i, Src: fmt.Sprintf("h%d", i+10), Dst: "h9", Bytes: mib})
	}
	run(t, e, flows)
	var drops, pause [2]uint64
	for k, p := range e.Counters().Ports {
		for i, sw := range []string{"leaf1", "leaf2"} {
			if k.Device == sw {
				drops[i] += p.Drops
				pause[i] += p.PFCTx[3]
			}
		}
	}
	if drops[0] == 0 || pause[0] != 0 {
		t.Errorf("leaf1 without PFC: %d drops, %d PAUSE frames; want drops and no PAUSE", drops[0], pause[0])
	}
	if drops[1] != 0 || pause[1] == 0 {
		t.Errorf("leaf2 with PFC: %d drops, %d PAUSE frames; want PAUSE and no drops", drops[1], pause[1])
	}
}
