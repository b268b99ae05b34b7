package selb

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// newModule is a SELB module with some parameters changed.
func newModule(t testing.TB, params map[string]string) *Module {
	t.Helper()
	return lbtest.New[*Module](t, Register, "selb", params)
}

// elephants are n flows of bytes from h1..hn to h(n+1)..h(2n): on
// leafspine:4x2:8 every flow crosses the spines, and ECMP puts some on the
// same one.
func elephants(n int, bytes int64) []fabric.Flow {
	fs := make([]fabric.Flow, n)
	for i := range fs {
		fs[i] = fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", n+i+1), Bytes: bytes}
	}
	return fs
}

// run is lbtest.Run with m on every switch.
func run(t testing.TB, topo *fabric.Topology, cfg fabric.Config, m lb.Module, fs []fabric.Flow) lbtest.Outcome {
	t.Helper()
	return lbtest.Run(t, topo, cfg, m, nil, fs)
}

// watch wraps SELB and checks, at the source ToR, every packet it pins:
// a TAIL leaves by a path SELB has marked congested, and the packets a
// flow has in flight between its ToRs are on at most two paths.
type watch struct {
	*Module
	t        testing.TB
	inflight map[int32]map[int32]int // by flow, by path
	paths    map[int32]map[int32]bool
	most     int
	tails    int
}

func (w *watch) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind == lb.Data && p.Hdr.Flags&lb.FlagPinned != 0 {
		f := w.inflight[p.Flow]
		if f == nil {
			f, w.paths[p.Flow] = map[int32]int{}, map[int32]bool{}
			w.inflight[p.Flow] = f
		}
		switch p.Role {
		case lb.SrcToR:
			f[p.Hdr.Path]++
			w.paths[p.Flow][p.Hdr.Path] = true
			n := 0
			for _, k := range f {
				if k > 0 {
					n++
				}
			}
			w.most = max(w.most, n)
			if p.Hdr.Flags&lb.FlagTail != 0 {
				w.tails++
				s := &w.sws[sw.ID()]
				if !s.congested[s.rows[p.DstToR][p.Hdr.Path]] {
					w.t.Errorf("flow %d left path %d, which is not congested", p.Flow, p.Hdr.Path)
				}
			}
		case lb.DstToR:
			f[p.Hdr.Path]--
		}
	}
	return w.Module.Arrive(sw, p, out)
}

// TestFlowsMoveOffCongestedPaths: 8 elephants over 4 spines (ECMP puts
// several on one spine, whose queues then grow) leave the paths SELB
// marks congested, each flow on at most two paths at a time, and a
// lossless go-back-N receiver sees every packet in order while reorder
// queues held the rerouted packets that overtook their tail. With a θ no
// queue's growth reaches, nothing moves.
func TestFlowsMoveOffCongestedPaths(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:8@100", nil)
	for _, tc := range []struct {
		name   string
		params map[string]string
		moves  bool
	}{
		{"defaults", nil, true},
		{"θ never reached", map[string]string{"theta": "1e9"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &watch{Module: newModule(t, tc.params), t: t, inflight: map[int32]map[int32]int{}, paths: map[int32]map[int32]bool{}}
			r := run(t, topo, fabric.DefaultConfig(), w, elephants(8, 4<<20))
			s, rs := w.Stats()
			t.Logf("%+v; reordering %+v; engine %+v; last flow %d us", s, rs, r.RQ, r.Last/1000)
			moved := 0
			for _, ps := range w.paths {
				if len(ps) > 1 {
					moved++
				}
			}
			if s.Samples == 0 {
				t.Fatal("the source ToRs never sampled their queues")
			}
			if got := s.Reroutes > 0 && moved > 0 && int64(w.tails) == s.Reroutes; got != tc.moves {
				t.Fatalf("%d reroutes, %d tails, %d flows on more than one path; want moves: %v", s.Reroutes, w.tails, moved, tc.moves)
			}
			if w.most > 2 {
				t.Errorf("a flow had packets in flight on %d paths at once", w.most)
			}
			if r.OOO != 0 || r.Retx != 0 || r.Drops != 0 {
				t.Errorf("%d out of sequence, %d retransmitted, %d dropped: want none", r.OOO, r.Retx, r.Drops)
			}
			if tc.moves && (rs.Held == 0 || r.RQ.Allocs == 0 || s.Clears == 0) {
				t.Errorf("no reroute needed reordering (%+v, engine %+v): the zero above shows nothing", rs, r.RQ)
			}
			if !tc.moves && (s.Congested != 0 || r.RQ.Allocs != 0) {
				t.Errorf("%d congested marks, %d reorder queues with θ never reached", s.Congested, r.RQ.Allocs)
			}
		})
	}
}

// TestDeterministic: two runs of the same flows on fresh engines and
// modules give the same results.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:8@100", nil)
	fs := elephants(8, 1<<20)
	a := run(t, topo, fabric.DefaultConfig(), newModule(t, nil), fs)
	b := run(t, topo, fabric.DefaultConfig(), newModule(t, nil), fs)
	if fmt.Sprint(a.Results) != fmt.Sprint(b.Results) || a.RQ != b.RQ {
		t.Errorf("runs differ:\n%v %+v\n%v %+v", a.Results, a.RQ, b.Results, b.RQ)
	}
}

// TestRegistryRejectsBadValues: each parameter's rule, and help and a
// default for every one.
func TestRegistryRejectsBadValues(t *testing.T) {
	t.Parallel()
	good := []string{"", "k=1", "k=64", "theta=0", "theta=12500", "period_us=0.5", "inactive_us=50", "reorder_wait_us=50"}
	bad := []string{"k=0", "k=2.5", "k=65", "period_us=0", "theta=-1", "ctrl_bytes=32", "reorder_margin_us=0", "θ=5"}
	r := lbtest.CheckParams(t, Register, "selb", good, bad)
	ps, _ := r.Params("selb")
	for _, p := range ps {
		if p.Kind == lb.Float && p.Unit == "" {
			t.Errorf("%s lacks a unit", p.Name)
		}
	}
}

// TestFatTree: on a k=4 fat-tree a source ToR has 2 uplinks and 4 paths
// to another pod's ToR (each uplink's aggregation switch reaches 2 cores);
// SELB samples the uplinks, maps each path to the uplink it leaves by, and
// moves cross-pod elephants off congested uplinks, each flow on at most
// two paths, in order.
func TestFatTree(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "fattree:4@100", nil)
	var fs []fabric.Flow
	for i := 0; i < 4; i++ { // pod 0's four hosts to pods 2 and 3
		fs = append(fs, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", 9+2*i), Bytes: 4 << 20})
	}
	w := &watch{Module: newModule(t, nil), t: t, inflight: map[int32]map[int32]int{}, paths: map[int32]map[int32]bool{}}
	r := run(t, topo, fabric.DefaultConfig(), w, fs)
	s, rs := w.Stats()
	t.Logf("%+v; reordering %+v; engine %+v; last flow %d us", s, rs, r.RQ, r.Last/1000)
	mapped := 0
	for id, sw := range w.sws {
		for dst, row := range sw.rows {
			if row != nil {
				mapped++
				if len(row) != 4 || len(sw.up) != 2 {
					t.Errorf("switch %d to ToR %d: %d paths over %d uplinks, want 4 over 2", id, dst, len(row), len(sw.up))
				}
			}
		}
	}
	if mapped == 0 {
		t.Error("no source ToR mapped its paths")
	}
	if s.Samples == 0 || s.Reroutes == 0 || w.tails == 0 {
		t.Fatalf("no reroute: %+v", s)
	}
	if w.most > 2 || r.OOO != 0 || r.Retx != 0 {
		t.Errorf("%d paths in flight at most, %d out of sequence, %d retransmitted: want 2, 0, 0", w.most, r.OOO, r.Retx)
	}
}

// TestBeatsECMPOnCollidingElephants: 8 flows of 8 MiB from the 8 hosts of
// one leaf to the 8 of the other over 4 spines (lb/schemes'
// TestBaselineOrderings; ideal 1.37 ms): ECMP's hash puts some on the
// same spine; SELB moves flows off the spines whose queues grow and
// finishes the last flow sooner, over go-back-N, in order, for every
// seed tried.
func TestBeatsECMPOnCollidingElephants(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:4x2:8@100", nil)
	fs := elephants(8, 8<<20)
	for seed := int64(1); seed <= 3; seed++ {
		cfg := fabric.DefaultConfig()
		cfg.Seed = seed
		r := run(t, topo, cfg, newModule(t, nil), fs)
		base := run(t, topo, cfg, ecmp.Module{}, fs)
		t.Logf("seed %d: last flow done after %d us with SELB, %d us with ECMP; %d reorder queues", seed, r.Last/1000, base.Last/1000, r.RQ.Allocs)
		if r.Last >= base.Last || r.OOO != 0 || r.RQ.Allocs == 0 {
			t.Errorf("seed %d: SELB %d us (%d out of sequence, %d queues), ECMP %d us: want SELB sooner, in order",
				seed, r.Last/1000, r.OOO, r.RQ.Allocs, base.Last/1000)
		}
	}
}
