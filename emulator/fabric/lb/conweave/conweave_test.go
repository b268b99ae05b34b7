package conweave

import (
	"context"
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/inventory"
)

// newModule is a ConWeave module with some parameters changed.
func newModule(t testing.TB, params map[string]string) *Module {
	t.Helper()
	return lbtest.New[*Module](t, Register, "conweave", params)
}

// leafSpine is a 2-spine, 2-leaf fabric of 4 hosts per leaf (h1-h4 on
// leaf1, h5-h8 on leaf2) at 100 Gb/s; with slow, the links through
// spine1 take 5 us instead of 1.
func leafSpine(t *testing.T, slow bool) *fabric.Topology {
	t.Helper()
	topo, _ := lbtest.Topology(t, "leafspine:2x2:4@100", func(l *inventory.Link) {
		if slow && (l.A.Device == "spine1" || l.B.Device == "spine1") {
			l.DelayNs = 5000
		}
	})
	return topo
}

// flows are n flows of size bytes, from h1.. to dsts (cycled).
func flows(n int, bytes int64, dsts ...string) []fabric.Flow {
	var fs []fabric.Flow
	for i := 0; i < n; i++ {
		fs = append(fs, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i), Dst: dsts[i%len(dsts)], Bytes: bytes})
	}
	return fs
}

// TestReroutesOnlyWhenTheReplyIsLate: an uncongested path answers every
// RTT request in time and no flow moves; four flows into two uplinks
// build queues, replies come late and flows reroute, never sooner than
// θ_reply after their request; with a θ_reply longer than any queue, none
// does.
func TestReroutesOnlyWhenTheReplyIsLate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		n        int
		replyUs  string
		reroutes bool
	}{
		{"idle path", 1, "8", false},
		{"congested paths", 4, "8", true},
		{"congested paths, long θ_reply", 4, "10000", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModule(t, map[string]string{"reply_us": tc.replyUs})
			lbtest.Run(t, leafSpine(t, false), fabric.DefaultConfig(), m, nil, flows(tc.n, 4<<20, "h5", "h6", "h7", "h8"))
			s := m.Stats()
			t.Logf("%+v", s)
			if s.Requests == 0 || s.Replies == 0 {
				t.Fatalf("no RTT monitoring: %+v", s)
			}
			if got := s.Timeouts > 0 && s.Reroutes > 0; got != tc.reroutes {
				t.Errorf("%d timeouts, %d reroutes; want reroutes %v", s.Timeouts, s.Reroutes, tc.reroutes)
			}
			if !tc.reroutes && s.Timeouts != 0 {
				t.Errorf("%d reply timeouts on paths that answer in time", s.Timeouts)
			}
			if s.Timeouts > 0 && s.MinWaitNs <= m.replyNs {
				t.Errorf("a flow timed out %d ns after its request, before θ_reply (%d ns)", s.MinWaitNs, m.replyNs)
			}
		})
	}
}

// TestAFlowIsOnAtMostTwoPaths: with a θ_reply short enough that flows
// reroute all the time over 4 spines, no flow ever has packets in flight
// on three paths, though many have them on two.
func TestAFlowIsOnAtMostTwoPaths(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:4@100", nil)
	for _, reply := range []string{"1", "3"} {
		m := newModule(t, map[string]string{"reply_us": reply})
		c := lbtest.NewPathCounter(m)
		lbtest.Run(t, topo, fabric.DefaultConfig(), c, nil, flows(4, 2<<20, "h5", "h6", "h7", "h8"))
		s := m.Stats()
		if s.Reroutes < 10 || c.Most != 2 {
			t.Errorf("θ_reply %s us: %d reroutes, at most %d paths in flight per flow: want many reroutes, 2 paths", reply, s.Reroutes, c.Most)
		}
	}
}

// TestReorderQueueKeepsOrder: flows rerouted from a slow spine (its RTT is
// past θ_reply) to a fast one overtake their old path's tail; the
// destination ToR holds them, and a lossless go-back-N receiver sees no
// packet out of sequence. Without ConWeave's queues (ECMP cannot reorder)
// nothing is held; the check that holding happened is what makes the
// zero meaningful.
func TestReorderQueueKeepsOrder(t *testing.T) {
	t.Parallel()
	m := newModule(t, nil)
	o := lbtest.Run(t, leafSpine(t, true), fabric.DefaultConfig(), m, nil, flows(4, 2<<20, "h5", "h6", "h7", "h8"))
	s := m.Stats()
	t.Logf("%+v; engine %+v", s, o.RQ)
	if s.Reroutes == 0 || s.Reordering.Held == 0 || o.RQ.Allocs == 0 || s.Reordering.ByTail == 0 {
		t.Fatalf("no packet was held for reordering: %+v, engine %+v", s, o.RQ)
	}
	if o.OOO != 0 || o.Retx != 0 || o.Drops != 0 {
		t.Errorf("%d packets out of sequence, %d retransmitted, %d dropped: want none", o.OOO, o.Retx, o.Drops)
	}
	if o.RQ.Fallbacks != 0 || o.RQ.Timeouts != 0 {
		t.Errorf("engine %+v: want no fallback or timeout with 8 queues a port", o.RQ)
	}
}

// TestFallsBackWhenQueuesRunOut: four flows to one host reroute between a
// slow spine (past θ_reply) and a fast one, and several want a queue of
// the same egress port at once; with one queue a port the others fall
// back, every refused queue is a counted fallback, and their early packets
// reach the receiver out of order; with 8 none falls back and order holds.
func TestFallsBackWhenQueuesRunOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		queues    int
		fallbacks bool
	}{{1, true}, {8, false}} {
		t.Run(fmt.Sprintf("%d per port", tc.queues), func(t *testing.T) {
			t.Parallel()
			cfg := fabric.DefaultConfig()
			cfg.ReorderQueues = tc.queues
			m := newModule(t, nil)
			o := lbtest.Run(t, leafSpine(t, true), cfg, m, nil, flows(4, 2<<20, "h5"))
			s := m.Stats()
			t.Logf("%+v; engine %+v", s, o.RQ)
			if o.RQ.MaxInUse > max(tc.queues, 0) || o.RQ.Allocs == 0 {
				t.Errorf("engine %+v: want queues used, at most %d at once", o.RQ, tc.queues)
			}
			if got := o.RQ.Fallbacks > 0; got != tc.fallbacks || (o.OOO > 0) != tc.fallbacks {
				t.Errorf("%d fallbacks, %d out of sequence; want fallbacks and reordering: %v", o.RQ.Fallbacks, o.OOO, tc.fallbacks)
			}
			if o.RQ.Fallbacks != o.RQ.Exhausted || o.RQ.Fallbacks != s.Reordering.Fallbacks {
				t.Errorf("engine counted %d refusals and %d fallbacks, the module %d: want all equal",
					o.RQ.Exhausted, o.RQ.Fallbacks, s.Reordering.Fallbacks)
			}
		})
	}
}

// TestControlPacketsCountInLinkBytes: one flow on an idle fabric sends the
// same data and ACKs under ConWeave as under ECMP (both paths are 4 links);
// ConWeave adds its RTT replies, each crossing the destination ToR's uplink
// and the spine's downlink, and the ports' tx bytes show them.
func TestControlPacketsCountInLinkBytes(t *testing.T) {
	t.Parallel()
	topo := leafSpine(t, false)
	fs := flows(1, 1<<20, "h5")
	m := newModule(t, nil)
	cw := lbtest.Run(t, topo, fabric.DefaultConfig(), m, nil, fs)
	base := lbtest.Run(t, topo, fabric.DefaultConfig(), ecmp.Module{}, nil, fs)
	s := m.Stats()
	if s.CtrlPkts == 0 || s.CtrlPkts != s.Requests || s.Timeouts != 0 {
		t.Fatalf("%+v: want one reply per request, no timeout", s)
	}
	if extra := int64(cw.TxBytes) - int64(base.TxBytes); extra != 2*s.CtrlBytes {
		t.Errorf("ConWeave sent %d bytes more than ECMP; its %d control packets are %d bytes over 2 links each",
			extra, s.CtrlPkts, 2*s.CtrlBytes)
	}
}

func TestRegistryRejectsBadValues(t *testing.T) {
	t.Parallel()
	good := []string{"", "path_busy_us=0", "samples=4", "reorder_wait_us=50,reorder_margin_us=4"}
	bad := []string{"reply_us=0", "path_busy_us=-1", "inactive_us=x", "samples=1.5", "ctrl_bytes=32", "path_aware=maybe", "theta_reply=8"}
	lbtest.CheckParams(t, Register, "conweave", good, bad)
}

// TestDeterministic: two runs of the same flows on fresh engines and
// modules give the same results. (A second run on the same engine differs
// even under ECMP: the engine's own random stream goes on.)
func TestDeterministic(t *testing.T) {
	t.Parallel()
	topo := leafSpine(t, true)
	fs := flows(4, 1<<20, "h5", "h6", "h7", "h8")
	once := func(e *fabric.PacketEngine) string {
		res, err := e.Run(context.Background(), fs, fabric.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(res)
	}
	engine := func() *fabric.PacketEngine {
		e, err := fabric.NewPacketEngineLB(topo, fabric.DefaultConfig(), newModule(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if a, b := once(engine()), once(engine()); a != b {
		t.Errorf("runs differ:\n%s\n%s", a, b)
	}
}

// TestBeatsECMPOnCollidingElephants: 8 flows of 8 MiB from the 8 hosts of
// one leaf to the 8 of the other over 4 spines (the setting of
// lb/schemes' TestBaselineOrderings, ideal 1.37 ms): ECMP's hash puts some
// on the same spine; ConWeave moves flows off the spines whose replies come
// late and finishes the last flow sooner, over go-back-N, without a packet
// out of sequence, for every seed tried.
func TestBeatsECMPOnCollidingElephants(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:8@100", nil)
	var fs []fabric.Flow
	for i := 0; i < 8; i++ {
		fs = append(fs, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", 9+i), Bytes: 8 << 20})
	}
	for seed := int64(1); seed <= 3; seed++ {
		cfg := fabric.DefaultConfig()
		cfg.Seed = seed
		o := lbtest.Run(t, topo, cfg, newModule(t, nil), nil, fs)
		cw, base := o.Last, lbtest.Run(t, topo, cfg, ecmp.Module{}, nil, fs).Last
		t.Logf("seed %d: last flow done after %d us with ConWeave, %d us with ECMP; %d reorder queues", seed, cw/1000, base/1000, o.RQ.Allocs)
		if cw >= base || o.OOO != 0 || o.RQ.Allocs == 0 {
			t.Errorf("seed %d: ConWeave %d us (%d out of sequence, %d queues), ECMP %d us: want ConWeave sooner, in order",
				seed, cw/1000, o.OOO, o.RQ.Allocs, base/1000)
		}
	}
}
