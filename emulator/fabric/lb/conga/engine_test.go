package conga

import (
	"context"
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// watched is CONGA with a look at every packet at every hop, before and
// after the module's own Arrive.
type watched struct {
	*module
	before, after func(sw lb.Switch, p *lb.Packet, out lb.Egress)
}

func (w *watched) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if w.before != nil {
		w.before(sw, p, out)
	}
	q := w.module.Arrive(sw, p, out)
	if w.after != nil {
		w.after(sw, p, out)
	}
	return q
}

// engine is a packet engine on a generated leaf-spine whose switches all
// run m (one instance: CONGA keys its tables by switch).
func engine(t testing.TB, spec string, m lb.Module) *fabric.PacketEngine {
	t.Helper()
	topo, _ := lbtest.Topology(t, spec, nil)
	cfg := fabric.DefaultConfig()
	cfg.Seed = 1
	e, err := fabric.NewPacketEngineLB(topo, cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func runAll(t testing.TB, e *fabric.PacketEngine, flows []fabric.Flow) {
	t.Helper()
	res, err := e.Run(context.Background(), flows, fabric.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("flow %d: %s", r.ID, r.Err)
		}
	}
}

// TestNewFlowletsAvoidALoadedPath: on 2 spines x 3 leaves, a long flow
// loads one spine's path toward leaf2, either on the probes' own leaf
// (their local uplink) or from leaf3 (the spine's downlink to leaf2, which
// leaf1 learns of only from leaf2's feedback). Short probe flows from leaf1
// to leaf2 start one after another; once CONGA has seen the load, their
// flowlets take the other spine. ECMP, as a control, puts about half of
// them on the loaded spine.
func TestNewFlowletsAvoidALoadedPath(t *testing.T) {
	t.Parallel()
	const probes, warmup = 40, 8
	for _, tc := range []struct {
		name, loader, probeSrc string
		scheme                 string
		maxOnLoaded            int // of the probes after the warm-up
		minOnLoaded            int
	}{
		{"local uplink loaded", "h1", "h2", "conga", 0, 0},
		{"remote downlink loaded", "h5", "h1", "conga", 1, 0},
		{"ecmp control, remote", "h5", "h1", "ecmp", probes, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spine := map[int32]string{} // flow -> the spine its first data packet took
			w := &watched{module: newModule(t, nil)}
			w.before = func(sw lb.Switch, p *lb.Packet, out lb.Egress) {
				if _, seen := spine[p.Flow]; p.Kind == lb.Data && p.Role == lb.SrcToR && !seen {
					spine[p.Flow] = out.Next
				}
			}
			var m lb.Module = w
			if tc.scheme == "ecmp" {
				m = &ecmpWatch{w}
			}
			e := engine(t, "leafspine:2x3:2@100", m)
			flows := []fabric.Flow{{ID: 0, Src: tc.loader, Dst: "h3", Bytes: 32 << 20}}
			for i := 1; i <= probes; i++ { // 32 KiB every 25 us from 400 us: ~10 Gb/s
				flows = append(flows, fabric.Flow{ID: i, Src: tc.probeSrc, Dst: "h4", Bytes: 32 << 10, Start: 400_000 + int64(i)*25_000})
			}
			runAll(t, e, flows)
			on := 0
			for i := warmup + 1; i <= probes; i++ {
				if spine[int32(i)] == spine[0] {
					on++
				}
			}
			t.Logf("loader on %s; %d of %d probes after the warm-up on it", spine[0], on, probes-warmup)
			if on > tc.maxOnLoaded || on < tc.minOnLoaded {
				t.Errorf("%d of %d probes took the loaded %s, want %d-%d", on, probes-warmup, spine[0], tc.minOnLoaded, tc.maxOnLoaded)
			}
		})
	}
}

// ecmpWatch forwards as ECMP does but keeps the watch on arrivals.
type ecmpWatch struct{ w *watched }

func (e *ecmpWatch) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	return lb.ECMP(p.Hash, sw.Salt(), len(c))
}

func (e *ecmpWatch) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	e.w.before(sw, p, out)
	return lb.Normal
}

// TestFeedbackReturnsOnReversePackets: one flow from leaf1 to leaf2. The
// destination ToR learns the path's CE from the data; leaf1's To-Leaf
// table stays empty until reverse packets (ACKs) carrying feedback
// arrive, then holds what they carry: a non-zero metric for the flow's
// own path (it runs at line rate) and nothing for the path it never used.
func TestFeedbackReturnsOnReversePackets(t *testing.T) {
	t.Parallel()
	w := &watched{module: newModule(t, nil)}
	var (
		leaf1, leaf2        = -1, -1
		dataBefore, fbAcks  int
		firstData, firstFB  int64 = -1, -1
		maxLearned, ownPath int32 = 0, -1
		errs                []string
	)
	toLeaf := func() *pathMetrics { return w.tables(nil, leaf1).toLeaf[leaf2] }
	valid := func() int {
		n := 0
		if t := toLeaf(); t != nil {
			for _, v := range t.valid {
				if v {
					n++
				}
			}
		}
		return n
	}
	w.before = func(sw lb.Switch, p *lb.Packet, _ lb.Egress) {
		switch {
		case p.Kind == lb.Data && p.Role == lb.SrcToR:
			leaf1, leaf2, ownPath = sw.ID(), p.DstToR, p.Hdr.Path
			if firstData < 0 {
				firstData = sw.Now()
			}
			if firstFB < 0 {
				dataBefore++
				if n := valid(); n != 0 {
					errs = append(errs, fmt.Sprintf("at %d ns, before any feedback arrived, leaf1 knows %d paths", sw.Now(), n))
				}
			}
		case p.Kind != lb.Data && p.Role == lb.DstToR && p.Hdr.Flags&lb.FlagFeedback != 0:
			fbAcks++
			if firstFB < 0 {
				firstFB = sw.Now()
			}
		}
	}
	w.after = func(sw lb.Switch, p *lb.Packet, _ lb.Egress) {
		if p.Kind != lb.Data && p.Role == lb.DstToR && p.Hdr.Flags&lb.FlagFeedback != 0 {
			got := toLeaf().get(int(p.Hdr.FBPath), sw.Now(), w.age)
			if got != p.Hdr.FBMetric {
				errs = append(errs, fmt.Sprintf("ACK fed back path %d metric %d, leaf1 holds %d", p.Hdr.FBPath, p.Hdr.FBMetric, got))
			}
			if p.Hdr.FBPath == ownPath {
				maxLearned = max(maxLearned, got)
			}
		}
	}
	e := engine(t, "leafspine:2x2:2@100", w)
	runAll(t, e, []fabric.Flow{{ID: 0, Src: "h1", Dst: "h3", Bytes: 8 << 20}})
	for _, s := range errs[:min(len(errs), 5)] {
		t.Error(s)
	}
	t.Logf("first data %d ns, first feedback at leaf1 %d ns after %d data packets; %d ACKs with feedback; path %d learned up to %d",
		firstData, firstFB, dataBefore, fbAcks, ownPath, maxLearned)
	if firstFB <= firstData || dataBefore == 0 || fbAcks == 0 {
		t.Fatalf("feedback should reach leaf1 on ACKs after its data left: first data %d, first feedback %d, %d ACKs with it",
			firstData, firstFB, fbAcks)
	}
	if maxLearned == 0 {
		t.Error("leaf1 never learned a non-zero metric for the path its line-rate flow loads")
	}
	for id := range toLeaf().valid {
		if id != int(ownPath) && toLeaf().valid[id] {
			t.Errorf("leaf1 holds a metric for path %d, which nothing used", id)
		}
	}
}

// TestPacedFlowsFindFewFlowletGaps: a lone RDMA flow paced at line rate
// leaves no gap as long as 10 us between its packets (one flowlet each
// way, the seeds' point about RDMA and flowlets), while a timeout
// shorter than a packet's serialisation makes nearly every packet a
// flowlet of its own.
func TestPacedFlowsFindFewFlowletGaps(t *testing.T) {
	t.Parallel()
	const bytes = 1 << 20
	pkts := int64(bytes / fabric.DefaultConfig().MTU)
	for _, tc := range []struct {
		timeout  string
		min, max int64
		data     int64 // data flowlets (Counts), of the flowlets
	}{
		{"10", 2, 2, 1},                // data and ACKs: one flowlet each
		{"0.01", pkts, 2 * pkts, pkts}, // 10 ns: about every packet, each way; every data packet (80 ns apart)
	} {
		t.Run(tc.timeout+"us", func(t *testing.T) {
			t.Parallel()
			m := newModule(t, map[string]string{"flowlet_timeout_us": tc.timeout})
			e := engine(t, "leafspine:2x2:2@100", m)
			runAll(t, e, []fabric.Flow{{ID: 0, Src: "h1", Dst: "h3", Bytes: bytes}})
			if m.newFlowlets < tc.min || m.newFlowlets > tc.max {
				t.Errorf("timeout %s us: %d flowlets, want %d-%d", tc.timeout, m.newFlowlets, tc.min, tc.max)
			}
			// what the engine publishes (the module is every switch's: once)
			var data uint64
			for _, sc := range e.Counters().Schemes {
				for _, c := range sc.Switch {
					if c.Name == lb.CountFlowlets {
						data += c.Value
					}
				}
			}
			if data != uint64(tc.data) {
				t.Errorf("timeout %s us: the engine publishes %d data flowlets, want %d", tc.timeout, data, tc.data)
			}
		})
	}
}

// TestNoAllocationPerPacket: a run of a flow eight times longer allocates
// no more than a few objects more (packets come from the engine's pool;
// CONGA's tables are per leaf pair and its flowlets per flow).
func TestNoAllocationPerPacket(t *testing.T) {
	allocs := func(bytes int64) float64 {
		e := engine(t, "leafspine:2x2:2@100", newModule(t, nil))
		flows := []fabric.Flow{{ID: 0, Src: "h1", Dst: "h3", Bytes: bytes}, {ID: 1, Src: "h2", Dst: "h4", Bytes: bytes}}
		return testing.AllocsPerRun(2, func() { runAll(t, e, flows) })
	}
	short, long := allocs(1<<20), allocs(8<<20)
	t.Logf("allocations per run: %.0f for 2 x 1 MiB, %.0f for 2 x 8 MiB (%d more packets)", short, long, 2*7<<20/1024)
	if long > short+16 {
		t.Errorf("8x the packets cost %.0f allocations more", long-short)
	}
}

// made keeps the modules a registry makes for an engine's switches.
type made struct {
	reg *lb.Registry
	all []*module
}

func (k *made) New(name string, params map[string]string) (lb.Module, error) {
	m, err := k.reg.New(name, params)
	if err == nil {
		k.all = append(k.all, m.(*module))
	}
	return m, err
}

// TestDeterministicForASeed: with a module per switch, made by the
// registry as the emulator makes them, two engines with the same seed
// give the same FCTs, on a leaf-spine and on a fat-tree (where paths
// have four hops through aggregation and core switches), and the
// destination ToRs learn paths' CE. (A second run on the same engine does
// not repeat the first even with the built-in ECMP: engine state outlives
// a run.)
func TestDeterministicForASeed(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"leafspine:2x4:4@100", "fattree:4@100"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			topo, _ := lbtest.Topology(t, spec, nil)
			var flows []fabric.Flow
			for i := 0; i < 60; i++ { // all-to-all-ish, sizes 16 KiB to 1 MiB, staggered
				flows = append(flows, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i%16), Dst: fmt.Sprintf("h%d", 1+(i*7+5)%16),
					Bytes: 16 << (10 + i%7), Start: int64(i%10) * 3_000})
			}
			run := func() (string, *made) {
				reg := lb.NewRegistry()
				if err := Register(reg); err != nil {
					t.Fatal(err)
				}
				mods := &made{reg: reg}
				cfg := fabric.DefaultConfig()
				cfg.Seed, cfg.LB, cfg.Modules = 5, "conga", mods
				s := ""
				for _, r := range lbtest.Run(t, topo, cfg, nil, nil, flows).Results {
					s += fmt.Sprintf("%d:%d ", r.ID, r.End-r.Start)
				}
				return s, mods
			}
			a, mods := run()
			if b, _ := run(); a != b {
				t.Errorf("same seed, different FCTs:\n%s\n%s", a, b)
			}
			flowlets, learned := int64(0), 0
			for _, m := range mods.all {
				flowlets += m.newFlowlets
				for _, sw := range m.sws {
					if sw == nil { // another switch's slot
						continue
					}
					for _, from := range sw.fromLeaf {
						if from == nil {
							continue
						}
						for _, v := range from.valid {
							if v {
								learned++
							}
						}
					}
				}
			}
			if flowlets == 0 || learned == 0 {
				t.Errorf("%d flowlets, %d paths' CE learned at destination ToRs", flowlets, learned)
			}
		})
	}
}
