package gemma

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/inventory"
)

// newModule is a Gemma module with some parameters changed.
func newModule(t testing.TB, params map[string]string) *Module {
	t.Helper()
	return lbtest.New[*Module](t, Register, "gemma", params)
}

// viaSpine1 is a plain switch program that sends everything it can through
// spine1: the background traffic that congests spine1's downlink.
type viaSpine1 struct{}

func (viaSpine1) Select(_ lb.Switch, _ *lb.Packet, c []lb.Egress) int {
	for i, e := range c {
		if e.Next == "spine1" {
			return i
		}
	}
	return 0
}

// flow is one flow of bytes from host src to host dst (numbers).
func flow(id, src, dst int, bytes int64) fabric.Flow {
	return fabric.Flow{ID: id, Src: fmt.Sprintf("h%d", src), Dst: fmt.Sprintf("h%d", dst), Bytes: bytes}
}

// uplinkBytes are the bytes leaf sent toward spine (its port to it).
func uplinkBytes(t testing.TB, lab *inventory.Lab, o lbtest.Outcome, leaf, spine string) uint64 {
	t.Helper()
	for _, l := range lab.Links {
		if l.A.Device == leaf && l.B.Device == spine {
			return o.Ports[fabric.PortKey{Device: leaf, Port: l.A.Port}].TxBytes
		}
		if l.B.Device == leaf && l.A.Device == spine {
			return o.Ports[fabric.PortKey{Device: leaf, Port: l.B.Port}].TxBytes
		}
	}
	t.Fatalf("no link %s-%s", leaf, spine)
	return 0
}

// congestedDownlink: 2 spines, 3 leaves of 4 hosts; leaf3's hosts send to
// leaf2's through spine1 alone (a plain module on leaf3), congesting
// spine1's downlink to leaf2; leaf1's hosts send to leaf2's under Gemma.
func congestedDownlink(t *testing.T) (*fabric.Topology, *inventory.Lab, []fabric.Flow) {
	topo, lab := lbtest.Topology(t, "leafspine:2x3:4@100", nil)
	var fs []fabric.Flow
	for i := 0; i < 4; i++ {
		fg := flow(i, 1+i, 5+i, 2<<20)
		fg.Start = 20_000 // ns: once the background has built its queue
		fs = append(fs, fg, flow(4+i, 9+i, 5+i, 4<<20))
	}
	return topo, lab, fs
}

// TestFlowsLeaveACongestedDownlink: spine1's queue toward leaf2 is long
// (leaf3's background); Gemma's flows from leaf1 learn it from spine1's
// reports and send most of their bytes through spine2, far more than
// ECMP's hash, which puts flows on either spine regardless; the flows
// that moved overtake their old path's packets, the destination edge
// holds those in reorder queues, and the go-back-N receivers see nothing
// out of sequence. With β = 0 (the reports ignored) the flows see only
// their uplinks.
func TestFlowsLeaveACongestedDownlink(t *testing.T) {
	t.Parallel()
	topo, lab, fs := congestedDownlink(t)
	bg := map[string]lb.Module{"leaf3": viaSpine1{}}
	share := func(o lbtest.Outcome) float64 {
		s1, s2 := uplinkBytes(t, lab, o, "leaf1", "spine1"), uplinkBytes(t, lab, o, "leaf1", "spine2")
		return float64(s1) / float64(s1+s2)
	}
	m := newModule(t, nil)
	g := lbtest.Run(t, topo, fabric.DefaultConfig(), m, bg, fs)
	e := lbtest.Run(t, topo, fabric.DefaultConfig(), ecmp.Module{}, bg, fs)
	s := m.Stats()
	t.Logf("spine1's share of leaf1's bytes: Gemma %.2f, ECMP %.2f; %+v; engine %+v", share(g), share(e), s, g.RQ)
	if s.Reports == 0 || s.MaxL2Bytes < 100_000 || s.Reroutes == 0 {
		t.Fatalf("no reports of the congested downlink (at least 100 KB) or no reroutes: %+v", s)
	}
	if share(g) > 1.0/3 || share(g) >= share(e) {
		t.Errorf("Gemma sent %.2f of leaf1's bytes through the congested spine, ECMP %.2f: want under a third and under ECMP's", share(g), share(e))
	}
	if g.RQ.Allocs == 0 || s.Reordering.Held == 0 || s.Clears == 0 {
		t.Fatalf("nothing was held for reordering: %+v, engine %+v", s, g.RQ)
	}
	if g.OOO != 0 || g.Retx != 0 || g.Drops != 0 {
		t.Errorf("%d packets out of sequence, %d retransmitted, %d dropped: want none", g.OOO, g.Retx, g.Drops)
	}
}

// TestReportsAreControlPackets: one flow on an idle fabric, under Gemma
// and under ECMP (every path is 4 links, an idle path is smooth: no
// reroute, no CLEAR; no ECN marks, so no CNPs): the spines' reports, each
// one link from a spine to a leaf, are what the ports' tx bytes show more
// under Gemma, give or take an ACK or two (the reports share the leaves'
// ports with the data, which moves ACK coalescing); the ports that ECMP
// left idle carry nothing but whole 64-byte reports; every report reached
// a leaf's table.
func TestReportsAreControlPackets(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:2x2:4@100", nil)
	fs := []fabric.Flow{flow(0, 1, 5, 1<<20)}
	cfg := fabric.DefaultConfig()
	cfg.ECNKminBytes, cfg.ECNKmaxBytes = 1<<40, 1<<40
	m := newModule(t, nil)
	g := lbtest.Run(t, topo, cfg, m, nil, fs)
	e := lbtest.Run(t, topo, cfg, ecmp.Module{}, nil, fs)
	s := m.Stats()
	// the run ends when the last sender has its last ACK: a report per
	// (spine, leaf) pair may still be on its way then (2 x 2 here; a
	// period of 4 us or more is longer than a report's trip)
	if s.Reports == 0 || s.ReportsIn > s.Reports || s.Reports-s.ReportsIn > 4 || s.Reroutes != 0 || s.CtrlPkts != 0 || s.CtrlBytes != 64*s.Reports {
		t.Fatalf("%+v: want reports of 64 bytes, each taken unless still on its way at the end, and no reroute", s)
	}
	var extra, idle int64
	for k, p := range g.Ports {
		extra += int64(p.TxBytes) - int64(e.Ports[k].TxBytes)
		if e.Ports[k].TxPkts == 0 && p.TxPkts > 0 {
			idle += int64(p.TxPkts)
			if p.TxBytes != 64*p.TxPkts {
				t.Errorf("port %v, idle under ECMP, sent %d bytes in %d packets under Gemma: want 64-byte reports", k, p.TxBytes, p.TxPkts)
			}
		}
	}
	if d := extra - s.CtrlBytes; d < -128 || d > 128 || idle == 0 {
		t.Errorf("Gemma sent %d bytes more than ECMP (%d reports on ports idle under ECMP); its %d reports are %d bytes over one link each",
			extra, idle, s.Reports, s.CtrlBytes)
	}
}

func TestRegistryRejectsBadValues(t *testing.T) {
	t.Parallel()
	good := []string{"", "beta=0", "gap=0"}
	bad := []string{"alpha=-1", "s_reroute=0", "ref_kb=x", "report_min_us=0", "ctrl_bytes=32", "S_reroute=0.5"}
	r := lbtest.CheckParams(t, Register, "gemma", good, bad)
	if _, err := r.New("gemma", map[string]string{"report_min_us": "40", "report_max_us": "32"}); err == nil {
		t.Error("report_max_us below report_min_us was accepted")
	}
}

// TestDeterministic: two runs of the same flows on fresh engines and
// modules give the same results and the same counts.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	topo, _, fs := congestedDownlink(t)
	bg := map[string]lb.Module{"leaf3": viaSpine1{}}
	once := func() string {
		m := newModule(t, nil)
		o := lbtest.Run(t, topo, fabric.DefaultConfig(), m, bg, fs)
		return fmt.Sprint(o.FCTs, m.Stats())
	}
	if a, b := once(), once(); a != b {
		t.Errorf("runs differ:\n%s\n%s", a, b)
	}
}

// TestAFlowIsOnAtMostTwoPaths: with an S_reroute so low that every queue
// makes a path congested, flows over 4 spines are rerouted again and
// again, yet none ever has packets in flight on three paths: a reroute
// waits for the previous one's CLEAR (many have them on two).
func TestAFlowIsOnAtMostTwoPaths(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:4@100", nil)
	var fs []fabric.Flow
	for i := 0; i < 4; i++ {
		fs = append(fs, flow(i, 1+i, 5+i, 2<<20))
	}
	for _, s := range []string{"0.01", "0.1"} {
		m := newModule(t, map[string]string{"s_reroute": s, "gap": "0"})
		c := lbtest.NewPathCounter(m)
		o := lbtest.Run(t, topo, fabric.DefaultConfig(), c, nil, fs)
		st := m.Stats()
		t.Logf("S_reroute %s: %d reroutes, %d clears, at most %d paths; %d out of sequence", s, st.Reroutes, st.Clears, c.Most, o.OOO)
		if st.Reroutes < 10 || c.Most != 2 || st.ClearTimeouts != 0 {
			t.Errorf("S_reroute %s: %d reroutes, at most %d paths in flight per flow, %d clear timeouts: want many reroutes, 2 paths, no timeout",
				s, st.Reroutes, c.Most, st.ClearTimeouts)
		}
	}
}
