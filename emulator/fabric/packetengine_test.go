package fabric

import (
	"fmt"
	"math"
	"testing"
)

func pengine(t *testing.T, n int, mod func(*Config)) *PacketEngine {
	t.Helper()
	topo, err := NewTopology(star(n, 100))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	return NewPacketEngine(topo, cfg)
}

// One flow on an idle path completes at its sender when the ACK of its
// last packet arrives: serialisation of every packet at line rate, one
// store-and-forward of the first packet at the switch (the others follow
// back to back), two link delays there and two back, the 64 B ACK
// serialised on both links back.
func TestPacketSingleFlowAnalytic(t *testing.T) {
	for _, bytes := range []int64{4096, 100_000, 16 * mib} {
		e := pengine(t, 2, nil)
		r := run(t, e, []Flow{{ID: 1, Src: "h1", Dst: "h2", Bytes: bytes, Priority: 3}})[0]
		pkts := math.Ceil(float64(bytes) / 4096)
		first := math.Min(float64(bytes), 4096) + 82
		want := (float64(bytes)+pkts*82)*8/100 + first*8/100 + 4000 + 2*64*8/100.0
		if got := float64(r.End - r.Start); math.Abs(got-want) > 2 {
			t.Errorf("%d B: FCT %.0f ns, want %.0f within 2 ns", bytes, got, want)
		}
		if bytes == 16*mib {
			goodput := float64(bytes) * 8 / float64(r.End-r.Start)
			if eff := 100 * 4096.0 / (4096 + 82); math.Abs(goodput-eff)/eff > 0.005 {
				t.Errorf("goodput %.2f Gb/s, want line rate minus headers %.2f", goodput, eff)
			}
		}
	}
}

func TestPacketFairShare(t *testing.T) {
	const n = 8
	e := pengine(t, n+1, func(c *Config) { c.DCQCN.Enabled = false })
	res := run(t, e, incast(n, 4*mib))
	var lo, hi int64 = math.MaxInt64, 0
	for _, r := range res {
		lo, hi = min(lo, r.End), max(hi, r.End)
	}
	if float64(hi-lo)/float64(hi) > 0.05 {
		t.Errorf("%d flows into one port must share within 5%%: ends %d..%d", n, lo, hi)
	}
	if bound := float64(n*4*mib*8) / 100; float64(hi) < bound {
		t.Errorf("last end %d beats line rate (%v)", hi, bound)
	}
}

func TestPacketIncastLosslessWithPFC(t *testing.T) {
	const n = 64
	e := pengine(t, n+1, func(c *Config) { c.DCQCN.Enabled = false })
	run(t, e, incast(n, 256<<10))
	c := e.Counters()
	var drops, pfcTx, pfcRx, retx uint64
	for k, p := range c.Ports {
		drops += p.Drops
		retx += p.Retransmits
		if k.Device == "sw" {
			pfcTx += p.PFCTx[3]
		} else {
			pfcRx += p.PFCRx[3]
		}
	}
	if drops != 0 || retx != 0 {
		t.Errorf("lossless incast: %d drops, %d retransmits", drops, retx)
	}
	if pfcTx == 0 || pfcRx != pfcTx {
		t.Errorf("PAUSE frames: switch sent %d, senders received %d", pfcTx, pfcRx)
	}
	if p := c.Ports[PortKey{"h2", "mlx5_0"}]; p.PauseRxNs[3] == 0 {
		t.Error("an upstream sender was never paused")
	}
}

func TestPacketIncastWithoutPFCDropsAndRetransmits(t *testing.T) {
	const n = 64
	e := pengine(t, n+1, func(c *Config) { c.PFC = false; c.DCQCN.Enabled = false; c.BufferBytes = 2 << 20 })
	run(t, e, incast(n, 256<<10)) // all flows still complete (go-back-N)
	c := e.Counters()
	var drops, retx uint64
	for _, p := range c.Ports {
		drops += p.Drops
		retx += p.Retransmits
	}
	if drops == 0 || retx == 0 {
		t.Errorf("lossy incast: drops %d, retransmits %d; want both > 0", drops, retx)
	}
}

func TestPacketDependenciesAndDeterminism(t *testing.T) {
	flows := []Flow{{ID: 1, Src: "h1", Dst: "h2", Bytes: mib}, {ID: 2, Src: "h2", Dst: "h3", Bytes: mib, After: []int{1}},
		{ID: 3, Src: "h3", Dst: "h1", Bytes: mib, Start: 50_000}}
	a := run(t, pengine(t, 3, nil), flows)
	b := run(t, pengine(t, 3, nil), flows)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed, different results")
	}
	if a[1].Start < a[0].End || a[2].Start != 50_000 {
		t.Errorf("starts: %+v", a)
	}
}
