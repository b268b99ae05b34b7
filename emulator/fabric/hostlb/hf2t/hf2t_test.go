package hf2t

import (
	"math"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
)

// clock is a host at a settable time (the rest of hostlb.Host unused).
type clock struct {
	hostlb.Host
	now int64
}

func (c *clock) Now() int64 { return c.now }

func newModule(t testing.TB, params map[string]string) *Module {
	t.Helper()
	r := hostlb.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	m, err := r.New("hf2t", params)
	if err != nil {
		t.Fatal(err)
	}
	mod := m.(*Module)
	mod.Reset(nil)
	return mod
}

// rng is a deterministic stream of uniforms in (0, 1).
type rng uint64

func (r *rng) next() float64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return (float64((x*2685821657736338717)>>11) + 0.5) / (1 << 53)
}

// sent is one packet of a driven flow: the gap its source left before it,
// and the module's hold.
type sent struct{ gap, hold, x int64 }

// drive sends n packets of one flow through m: each is offered gap() ns
// after the previous one left (its hold included), as a NIC pacing at a
// varying rate would offer them.
func drive(m *Module, n int, gap func() int64) []sent {
	h := &clock{}
	out := make([]sent, 0, n)
	var left int64
	for i := 0; i < n; i++ {
		g := int64(0)
		if i > 0 {
			g = gap()
		}
		h.now = left + g
		x := int64(0)
		if len(m.flows) > 0 {
			x = m.flows[0].x
		}
		hold := m.Send(h, &hostlb.Packet{Flow: 0, PSN: int64(i)})
		out = append(out, sent{gap: g, hold: hold, x: x})
		left = h.now + hold
	}
	return out
}

// paced is a rate-varying NIC's gaps: a line-rate packet time (84 ns at
// 100 Gb/s) plus an exponential wait of mean 1 us.
func paced(seed uint64) func() int64 {
	r := rng(seed)
	return func() int64 { return 84 + int64(-1000*math.Log(r.next())) }
}

const pretrain = 10_000

// TestPacedFlowGetsBoundariesAtTheConfiguredShare: after pre-training,
// without dynamic T, the host stretches about 100 - percentile % of a
// paced flow's gaps (a little fewer: T is a bin edge at or above the
// percentile); a flow whose gaps are all equal (line rate) gets none.
func TestPacedFlowGetsBoundariesAtTheConfiguredShare(t *testing.T) {
	t.Parallel()
	for _, pct := range []string{"99", "97.5"} {
		m := newModule(t, map[string]string{"percentile": pct, "dynamic": "false", "pretrain_gaps": "10000"})
		pkts := drive(m, pretrain+100_000, paced(7))
		held := 0
		for _, p := range pkts[pretrain+1:] {
			if p.hold > 0 {
				held++
			}
		}
		share := 100 * float64(held) / float64(len(pkts)-pretrain-1)
		want := 100 - m.pct
		t.Logf("percentile %s: T = %d ns, %.3f %% of gaps stretched", pct, m.t, share)
		if share < 0.7*want || share > 1.05*want {
			t.Errorf("percentile %s: %.3f %% of gaps stretched, want about %.1f %%", pct, share, want)
		}
		if m.stats.Natural != 0 {
			t.Errorf("%d natural boundaries in gaps of a few us against a 50 us timeout", m.stats.Natural)
		}
	}
	m := newModule(t, map[string]string{"dynamic": "false"})
	for _, p := range drive(m, 3*pretrain, func() int64 { return 84 }) {
		if p.hold > 0 {
			t.Fatalf("a line-rate flow's gap was stretched (T = %d ns)", m.t)
		}
	}
}

// TestNoPacketHeldBeyondTheFlowletTimeout: every hold brings its gap to
// 1 ns past the flowlet timeout, never more, with dynamic T or without,
// and a gap at or above the timeout is never held.
func TestNoPacketHeldBeyondTheFlowletTimeout(t *testing.T) {
	t.Parallel()
	for _, dyn := range []string{"true", "false"} {
		m := newModule(t, map[string]string{"flowlet_us": "6", "dynamic": dyn, "pretrain_gaps": "1000"})
		holds := 0
		for i, p := range drive(m, 100_000, paced(11)) {
			switch {
			case p.hold < 0 || p.hold > m.flowlet:
				t.Fatalf("dynamic=%s packet %d: held %d ns, beyond the %d ns timeout", dyn, i, p.hold, m.flowlet)
			case p.hold > 0 && p.gap+p.hold != m.flowlet+1:
				t.Fatalf("dynamic=%s packet %d: gap %d + hold %d != timeout %d + 1", dyn, i, p.gap, p.hold, m.flowlet)
			case p.hold > 0 && p.gap >= m.flowlet:
				t.Fatalf("dynamic=%s packet %d: a natural gap of %d ns held", dyn, i, p.gap)
			case p.hold > 0:
				holds++
			}
		}
		if holds == 0 || m.stats.Natural == 0 {
			t.Errorf("dynamic=%s: %d holds, %d natural boundaries: the test exercised too little", dyn, holds, m.stats.Natural)
		}
	}
}

// TestDynamicTAvoidsShortAndLongFlowlets: α makes the flowlets the host
// cuts shorter than min_thr packets rarer than with T alone, and those
// that run past max_thr end sooner (a lower bar the longer they run).
func TestDynamicTAvoidsShortAndLongFlowlets(t *testing.T) {
	t.Parallel()
	type shape struct{ short, longMean float64 }
	got := map[string]shape{}
	for _, dyn := range []string{"true", "false"} {
		m := newModule(t, map[string]string{"dynamic": dyn})
		var short, cuts, long, longSum float64
		for _, p := range drive(m, pretrain+200_000, paced(3))[pretrain+1:] {
			if p.hold == 0 {
				continue
			}
			cuts++
			switch {
			case p.x < m.minThr:
				short++
			case p.x > m.maxThr:
				long++
				longSum += float64(p.x)
			}
		}
		got[dyn] = shape{short / cuts, longSum / long}
		t.Logf("dynamic=%s: %.0f cuts, %.1f %% after fewer than %d packets; those after more than %d: %.1f packets on average",
			dyn, cuts, 100*short/cuts, m.minThr, m.maxThr, longSum/long)
	}
	if d, s := got["true"], got["false"]; d.short >= s.short/2 || d.longMean >= s.longMean {
		t.Errorf("short share, mean long flowlet: dynamic %.3f, %.1f; static %.3f, %.1f", d.short, d.longMean, s.short, s.longMean)
	}
}

// TestSendDoesNotAllocate: once a flow's entry exists, Send allocates
// nothing, holding or not.
func TestSendDoesNotAllocate(t *testing.T) {
	m := newModule(t, map[string]string{"pretrain_gaps": "100"})
	gap := paced(5)
	h := &clock{}
	p := &hostlb.Packet{Flow: 3}
	step := func() { h.now += gap(); h.now += m.Send(h, p) }
	for i := 0; i < 1000; i++ {
		step()
	}
	if n := testing.AllocsPerRun(10_000, step); n != 0 {
		t.Errorf("%.2f allocations per packet", n)
	}
	if m.stats.Stretched == 0 {
		t.Error("no packet held: the holding path was not measured")
	}
}

// TestParams: the registry takes the paper's settings and refuses
// values outside their rules, and min_thr at or above max_thr.
func TestParams(t *testing.T) {
	t.Parallel()
	r := hostlb.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	for _, good := range []map[string]string{nil, {"percentile": "97.5"}, {"dynamic": "false", "flowlet_us": "25"}, {"t_us": "2"}} {
		if _, err := r.New("hf2t", good); err != nil {
			t.Errorf("%v: %v", good, err)
		}
	}
	for _, bad := range []map[string]string{{"percentile": "100"}, {"flowlet_us": "0"}, {"min_thr": "0"},
		{"min_thr": "80", "max_thr": "20"}, {"dynamic": "maybe"}, {"pretrain": "5"}} {
		if _, err := r.New("hf2t", bad); err == nil {
			t.Errorf("%v was taken", bad)
		}
	}
	if err := r.CheckHardware("hf2t"); err == nil {
		t.Error("HF²T was accepted for real ConnectX hosts")
	}
}
