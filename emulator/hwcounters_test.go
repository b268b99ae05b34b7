package emulator

import (
	"context"
	"fmt"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// TestHWCountersFromTheTwin: after a 3:1 incast on the packet engine, the
// receiver's hw_counters show the marked packets it received and the CNPs
// it sent, and the senders' the CNPs they handled, read with the one cat
// labctl uses and parsed by connectx; the lossless incast has no sequence
// errors or ack timeouts; counters the twin does not keep are absent, not
// zero.
func TestHWCountersFromTheTwin(t *testing.T) {
	l, lab := incastTwin(t, 4, func(topo *fabric.Topology) fabric.Engine {
		return fabric.NewPacketEngine(topo, fabric.DefaultConfig())
	})
	read := func(h inventory.Host) map[string]uint64 { return readHWCounters(t, l, h) }
	recv := read(lab.Hosts[0])
	if recv["np_cnp_sent"] == 0 {
		t.Errorf("the incast receiver sent no CNP: %v", recv)
	}
	if recv["np_ecn_marked_roce_packets"] < recv["np_cnp_sent"] {
		t.Errorf("%d CNPs sent for %d marked packets: each CNP answers a marked one", recv["np_cnp_sent"], recv["np_ecn_marked_roce_packets"])
	}
	if _, ok := recv["implied_nak_seq_err"]; ok {
		t.Error("the twin keeps no implied-NAK counter: the file must be absent")
	}
	if v, ok := recv["rx_atomic_requests"]; !ok || v != 0 {
		t.Error("the twin sends no atomics: the counter is there and 0")
	}
	var handled uint64
	for _, h := range lab.Hosts[1:] {
		m := read(h)
		handled += m["rp_cnp_handled"]
		for _, c := range []string{"packet_seq_err", "local_ack_timeout_err"} {
			if v, ok := m[c]; !ok || v != 0 {
				t.Errorf("%s of a lossless sender: %d (present %v), want 0", c, v, ok)
			}
		}
	}
	if handled == 0 || handled > recv["np_cnp_sent"] {
		t.Errorf("senders handled %d CNPs of the %d sent", handled, recv["np_cnp_sent"])
	}
}

// TestHWCountersOnTheFlowEngine: the flow engine keeps no transport
// counters, so an emulated host on it serves none of them (absent, as on
// firmware without them), only those the twin never produces (as 0).
func TestHWCountersOnTheFlowEngine(t *testing.T) {
	l, lab := incastTwin(t, 2, func(topo *fabric.Topology) fabric.Engine {
		return fabric.NewFlowEngine(topo, fabric.DefaultConfig())
	})
	m := readHWCounters(t, l, lab.Hosts[0])
	for _, c := range []string{"out_of_sequence", "np_cnp_sent", "np_ecn_marked_roce_packets", "packet_seq_err"} {
		if v, ok := m[c]; ok {
			t.Errorf("%s = %d on the flow engine: want the file absent", c, v)
		}
	}
	if v, ok := m["rx_atomic_requests"]; !ok || v != 0 {
		t.Error("the twin sends no atomics: the counter is there and 0")
	}
}

// incastTwin runs an incast of 4 MiB from every other host of a
// one-leaf lab of n hosts to its first on the engine newEngine makes, and
// returns a lab around that twin.
func incastTwin(t *testing.T, n int, newEngine func(*fabric.Topology) fabric.Engine) (*Lab, *inventory.Lab) {
	t.Helper()
	lab, err := inventory.Generate(fmt.Sprintf("leafspine:1x1:%d@100", n))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := fabric.NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(topo)
	var flows []fabric.Flow
	for i, h := range lab.Hosts[1:] {
		flows = append(flows, fabric.Flow{ID: i, Src: h.Name, Dst: lab.Hosts[0].Name, Bytes: 4 << 20, Priority: 3})
	}
	if _, err := eng.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return &Lab{twin: newTwin(eng, map[string]publisher{}, nil)}, lab
}

// readHWCounters reads a host's hw_counters from the lab's twin as labctl
// does: one cat, parsed by connectx.
func readHWCounters(t *testing.T, l *Lab, h inventory.Host) map[string]uint64 {
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
