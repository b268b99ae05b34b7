package hf2t

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
)

// fatTreeOutcome is what one scheme did with a workload.
type fatTreeOutcome struct {
	flowlets, pauses int64
	avgFCT           float64 // ns
	stretched        uint64
	host             fabric.HostStats
}

// runFatTree runs flows over LetFlow (timeout flowletUs) and, with host true, HF²T (params,
// flowlet_us matched) on every host.
func runFatTree(t *testing.T, topo *fabric.Topology, flows []fabric.Flow, flowletUs string, host bool, params map[string]string) fatTreeOutcome {
	t.Helper()
	sw := &lbtest.Keep[lb.Module]{Make: schemes.MustRegistry().New}
	hreg := hostlb.NewRegistry()
	if err := Register(hreg); err != nil {
		t.Fatal(err)
	}
	hs := &lbtest.Keep[hostlb.Module]{Make: hreg.New}
	cfg := fabric.DefaultConfig()
	cfg.LB, cfg.LBParams, cfg.Modules, cfg.Seed = "letflow", map[string]string{"timeout_us": flowletUs}, sw, 1
	if host {
		p := map[string]string{"flowlet_us": flowletUs}
		maps.Copy(p, params)
		cfg.HostLB, cfg.HostLBParams, cfg.HostModules = "hf2t", p, hs
	}
	out := lbtest.Run(t, topo, cfg, nil, nil, flows) // each switch its own LetFlow, as in the emulated lab
	o := fatTreeOutcome{host: out.Host}
	for _, m := range sw.Made {
		o.flowlets += m.(interface{ Flowlets() int64 }).Flowlets()
	}
	for _, fct := range out.FCTs {
		o.avgFCT += float64(fct) / float64(len(out.FCTs))
	}
	for _, p := range out.Ports {
		for _, n := range p.PFCTx {
			o.pauses += int64(n)
		}
	}
	for _, m := range hs.Made {
		o.stretched += m.(*Module).Stats().Stretched
	}
	return o
}

// TestHF2TRaisesFlowletsOnAFatTree is the paper's Table 2 at small
// scale: on a k = 4 fat-tree at 100 Gb/s with Web Search flows at 0.7
// load for 5 ms over lossless RoCE (PFC, DCQCN), LetFlow with HF²T on the
// hosts sees more flowlets than LetFlow alone on each of two draws, at
// HF²T's default timeout (LetFlow's matched), and no packet is held
// beyond it.
//
// The paper also has PFC events fall by 76 %. The twin does not resolve
// that here: with its default buffers a draw sends tens of PAUSE frames,
// not thousands, and over six draws HF²T sent fewer in two, more in two
// and as many in two (docs/papers.md, HF²T). The counts are logged, not
// asserted.
func TestHF2TRaisesFlowletsOnAFatTree(t *testing.T) {
	if testing.Short() {
		t.Skip("several seconds of simulation")
	}
	t.Parallel()
	const timeout = "25" // flowlet_us's default
	for _, seed := range []int64{1, 2} {
		topo, flows := lbtest.WebSearch(t, "fattree:4@100", 0.7, 5*time.Millisecond, seed)
		alone := runFatTree(t, topo, flows, timeout, false, nil)
		with := runFatTree(t, topo, flows, timeout, true, nil)
		t.Logf("seed %d, %d flows; LetFlow alone: %d flowlets, %d PAUSE frames, avg FCT %.1f us", seed, len(flows), alone.flowlets, alone.pauses, alone.avgFCT/1e3)
		t.Logf("LetFlow + HF²T: %d flowlets, %d PAUSE frames, avg FCT %.1f us; %d gaps stretched (%+v)",
			with.flowlets, with.pauses, with.avgFCT/1e3, with.stretched, with.host)
		if with.stretched == 0 || with.host.Held != with.stretched {
			t.Fatalf("HF²T stretched %d gaps, the engine held %d packets", with.stretched, with.host.Held)
		}
		if with.flowlets <= alone.flowlets {
			t.Errorf("seed %d: flowlets: %d with HF²T, %d with LetFlow alone: want more", seed, with.flowlets, alone.flowlets)
		}
		if with.host.MaxHoldNs > 25_000 {
			t.Errorf("seed %d: a packet was held %d ns, beyond the 25 us flowlet timeout", seed, with.host.MaxHoldNs)
		}
	}
}

// TestEngineWithHF2TAllocatesPerRunNotPerPacket: a run of 8 times the
// packets, HF²T holding some of them on every host, allocates no more
// than a short one: nothing is allocated per packet.
func TestEngineWithHF2TAllocatesPerRunNotPerPacket(t *testing.T) {
	topo, _ := lbtest.Topology(t, "leafspine:2x2:2@100", nil)
	hreg := hostlb.NewRegistry()
	if err := Register(hreg); err != nil {
		t.Fatal(err)
	}
	cfg := fabric.DefaultConfig()
	cfg.LB, cfg.LBParams, cfg.Modules = "letflow", map[string]string{"timeout_us": "2"}, schemes.MustRegistry()
	cfg.HostLB, cfg.HostLBParams, cfg.HostModules = "hf2t", map[string]string{"flowlet_us": "2", "t_us": "0.001"}, hreg
	e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(bytes int64) (float64, fabric.HostStats) {
		flows := []fabric.Flow{{ID: 0, Src: "h1", Dst: "h3", Bytes: bytes}, {ID: 1, Src: "h2", Dst: "h4", Bytes: bytes}}
		run := func() {
			if _, err := e.Run(context.Background(), flows, fabric.RunOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		run() // warm: pools and tables at their peak
		return testing.AllocsPerRun(3, run), e.HostStats()
	}
	short, _ := allocs(1 << 20)
	long, st := allocs(8 << 20)
	t.Logf("allocations per run: %.0f (1 MiB flows), %.0f (8 MiB flows); %d packets held in the long run", short, long, st.Held)
	if st.Held < 100 {
		t.Fatalf("only %d packets held: the hold path was not exercised", st.Held)
	}
	if long > short+2 {
		t.Errorf("%.0f allocations for 8 MiB flows, %.0f for 1 MiB: some grow with the packets", long, short)
	}
}

// TestHF2TRunsAreDeterministic: the same flows on two fresh engines with
// HF²T on every host (each learning T) give the same outcome.
func TestHF2TRunsAreDeterministic(t *testing.T) {
	t.Parallel()
	topo, flows := lbtest.WebSearch(t, "fattree:4@100", 0.7, time.Millisecond, 3)
	a := runFatTree(t, topo, flows, "25", true, map[string]string{"pretrain_gaps": "100"})
	b := runFatTree(t, topo, flows, "25", true, map[string]string{"pretrain_gaps": "100"})
	if a != b {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.stretched == 0 {
		t.Error("no gap stretched: the holds were not compared")
	}
}
