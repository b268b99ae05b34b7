package scenarios

import (
	"cmp"
	"math"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// TestEmulationKnobs: the packet engine's conventions are read from the
// emulation section, left unset when not written, and refused with
// file:line when out of range or asked of the flow engine.
func TestEmulationKnobs(t *testing.T) {
	t.Parallel()
	const traffic = "traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	s, err := Parse([]byte("name: k\nemulation: {nack_interval_us: 0, cnp_on_nack: false, pfc_pause_quanta: 1000, pfc_refresh_us: 2.5, reorder_queues: 0}\n"+traffic), "k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := s.Emulation.Knobs
	if k.NackIntervalUs == nil || *k.NackIntervalUs != 0 || k.CNPOnNack == nil || *k.CNPOnNack || k.PFCPauseQuanta != 1000 ||
		k.PFCRefreshUs != 2.5 || k.ReorderQueues == nil || *k.ReorderQueues != 0 {
		t.Errorf("knobs read as %+v", k)
	}
	if s, _ := Parse([]byte("name: k\n"+traffic), "k.yaml"); s.Emulation.Knobs.Any() {
		t.Errorf("knobs set without being written: %+v", s.Emulation.Knobs)
	}
	for _, tc := range []struct{ em, want string }{
		{"{nack_interval_us: -1}", "k.yaml:2: emulation.nack_interval_us: must be >= 0"},
		{"{pfc_pause_quanta: 70000}", "k.yaml:2: emulation.pfc_pause_quanta: must be between 1 and 65535"},
		{"{pfc_refresh_us: -3}", "k.yaml:2: emulation.pfc_refresh_us: must be > 0"},
		{"{reorder_queues: -8}", "k.yaml:2: emulation.reorder_queues: must be >= 0"},
		{"{engine: flow, reorder_queues: 4}", "k.yaml:2: emulation: lb, transport and the packet engine's knobs need the packet engine"},
	} {
		_, err := Parse([]byte("name: k\nemulation: "+tc.em+"\n"+traffic), "k.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.em, err, tc.want)
		}
	}
}

// TestLoadBasisNetwork: a load stated against the network's capacity has
// each host of a 2:1 leaf-spine offer half of it, as the papers'
// simulators generate traffic; the host basis (the default) offers it all.
func TestLoadBasisNetwork(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:2x2:4@100") // 4 hosts, 2 uplinks a leaf: 2:1
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		basis string
		want  float64
	}{{"", 0.8}, {"host", 0.8}, {"network", 0.4}} {
		doc := "name: n\ntraffic: [{name: w, pattern: workload, cdf: websearch, load: 0.8, duration: 2ms, seed: 1, load_basis: " + cmp.Or(tc.basis, "host") + "}]\n"
		s, err := Parse([]byte(doc), "n.yaml")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := MakePlan(s, lab)
		if err != nil {
			t.Fatal(err)
		}
		pt := plan.Points[0]
		if pt.RequestedLoad != tc.want || math.Abs(pt.OfferedLoad-tc.want)/tc.want > 0.05 {
			t.Errorf("basis %q: requested %v offered %v, want %v of each host's link", tc.basis, pt.RequestedLoad, pt.OfferedLoad, tc.want)
		}
	}
	if _, err := Parse([]byte("name: n\ntraffic: [{name: w, pattern: workload, cdf: websearch, load: 0.8, duration: 2ms, load_basis: fabric}]\n"), "n.yaml"); err == nil || !strings.Contains(err.Error(), `n.yaml:2: traffic[0].load_basis: unknown basis "fabric"`) {
		t.Errorf("bad basis: %v", err)
	}
}
