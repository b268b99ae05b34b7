package emulator

import (
	"context"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// TestHWCountersFromTheTwin: after a 3:1 incast on the packet engine, the
// receiver's hw_counters show the CNPs it sent and the senders' the CNPs
// they handled, read with the one cat labctl uses and parsed by connectx;
// counters the twin does not keep are absent, not zero.
func TestHWCountersFromTheTwin(t *testing.T) {
	lab, err := inventory.Generate("leafspine:1x1:4@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := fabric.NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	eng := fabric.NewPacketEngine(topo, fabric.DefaultConfig())
	var flows []fabric.Flow
	for i, h := range lab.Hosts[1:] {
		flows = append(flows, fabric.Flow{ID: i, Src: h.Name, Dst: lab.Hosts[0].Name, Bytes: 4 << 20, Priority: 3})
	}
	if _, err := eng.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	l := &Lab{twin: newTwin(eng, map[string]publisher{}, nil)}
	read := func(h inventory.Host) map[string]uint64 {
		t.Helper()
		hs := newHost(l, h, t.TempDir())
		dev := h.RNICs[0].Device
		argv, _ := splitWords(connectx.HWCountersCommand(dev))
		s := &fakeSession{}
		if st := hs.cat(context.Background(), argv, s.session()); st != 1 {
			t.Errorf("cat exits %d, want 1 (some counters are absent)", st)
		}
		m, err := connectx.ParseHWCounters(dev, s.out.String(), s.err.String())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	recv := read(lab.Hosts[0])
	if recv["np_cnp_sent"] == 0 {
		t.Errorf("the incast receiver sent no CNP: %v", recv)
	}
	if _, ok := recv["local_ack_timeout_err"]; ok {
		t.Error("the twin keeps no ack-timeout counter: the file must be absent")
	}
	if v, ok := recv["rx_atomic_requests"]; !ok || v != 0 {
		t.Error("the twin sends no atomics: the counter is there and 0")
	}
	var handled uint64
	for _, h := range lab.Hosts[1:] {
		handled += read(h)["rp_cnp_handled"]
	}
	if handled == 0 || handled > recv["np_cnp_sent"] {
		t.Errorf("senders handled %d CNPs of the %d sent", handled, recv["np_cnp_sent"])
	}
}
