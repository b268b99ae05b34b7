package flb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/inventory"
)

// The paper's bursty micro-benchmark (its Fig. 1 testbed) at reduced
// length. Its 5 switches are a source leaf S0 (senders H0-H2), three
// cores S1-S3 and a destination leaf S4 (receivers R0-R2 and burst
// senders H3-H16): leafspine:3x2:17@40 is that fabric, with two unused
// hosts on the first leaf, and 5 us links as on the paper's testbed
// settings (§4.3). f0, f1, f2 go H0->R0, H1->R1, H2->R2 from t = 0; at
// burstAt each of H3-H16 sends burstFlows 64 KB flows to R2, one after
// another (a flow every 64 KB at line rate), as the paper's 40 per
// sender at 40 ms; the long flows are longFlowBytes, not 250 MB.
const (
	microSpec     = "leafspine:3x2:17@40"
	burstAt       = 1_000_000 // ns
	burstFlows    = 10
	burstBytes    = 64 << 10
	longFlowBytes = 30 << 20
	sampleNs      = 10_000
	burstNs       = 2_000_000 // the window "during the burst": 14 x 10 x 64 KB take 1.8 ms at 40 Gb/s
)

var recv = [3]string{"h18", "h19", "h20"}

// microFlows are the micro-benchmark's flows: f0, f1, f2 first.
func microFlows() []fabric.Flow {
	fs := []fabric.Flow{
		{ID: 0, Src: "h1", Dst: "h18", Bytes: longFlowBytes, Priority: 3},
		{ID: 1, Src: "h2", Dst: "h19", Bytes: longFlowBytes, Priority: 3},
		{ID: 2, Src: "h3", Dst: "h20", Bytes: longFlowBytes, Priority: 3},
	}
	gap := int64(burstBytes * 8 / 40) // ns at 40 Gb/s
	for s := 0; s < 14; s++ {
		for k := 0; k < burstFlows; k++ {
			fs = append(fs, fabric.Flow{ID: len(fs), Src: fmt.Sprintf("h%d", 21+s), Dst: "h20",
				Bytes: burstBytes, Start: burstAt + int64(k)*gap, Priority: 3})
		}
	}
	return fs
}

func microTopology(t testing.TB) *fabric.Topology {
	topo, _ := lbtest.Topology(t, microSpec, func(l *inventory.Link) { l.DelayNs = 5000 })
	return topo
}

// microOutcome is what one scheme did in the micro-benchmark.
type microOutcome struct {
	pre, burst [3]float64 // Gb/s of f0, f1, f2 before and during the burst
	burstEnd   int64      // ns: when the last burst flow finished
	pauses     map[string]uint64
	firstPFC   int64 // ns (sample resolution): the first PAUSE anywhere; -1: none
	ooo, retx  uint64
	flb        flb.Stats
	host       fabric.HostStats
	fcts       []int64
}

// runMicro runs the micro-benchmark with switch scheme (and its params)
// and, if hostLB is set, that host module on every host; DCQCN off (the
// paper's ECMP, LetFlow and FLB send at line rate).
func runMicro(t testing.TB, topo *fabric.Topology, fs []fabric.Flow, scheme string, params map[string]string, hostLB string, edit func(*fabric.Config)) microOutcome {
	t.Helper()
	sw := &lbtest.Keep[lb.Module]{Make: schemes.MustRegistry().New}
	cfg := fabric.DefaultConfig()
	cfg.DCQCN.Enabled = false
	cfg.Seed, cfg.LB, cfg.LBParams, cfg.Modules = 1, scheme, params, sw
	if hostLB != "" {
		cfg.HostLB, cfg.HostModules = hostLB, hostschemes.MustRegistry()
	}
	if edit != nil {
		edit(&cfg)
	}
	e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := microOutcome{firstPFC: -1, pauses: map[string]uint64{}}
	// f0 and f1 by what their receivers take in; f2 by what its sender
	// sends (R2 also takes the burst), retransmissions included.
	got := func(c *fabric.Counters, i int) uint64 {
		if i == 2 {
			return c.Ports[fabric.PortKey{Device: "h3", Port: "mlx5_0"}].TxBytes
		}
		return c.Ports[fabric.PortKey{Device: recv[i], Port: "mlx5_0"}].RxBytes
	}
	var at0, at1 [3]uint64
	const preFrom, burstTo = burstAt / 4, burstAt + burstNs
	res, err := e.Run(context.Background(), fs, fabric.RunOptions{SampleEvery: sampleNs, OnSample: func(now int64, c *fabric.Counters) {
		for i := range recv {
			switch now {
			case preFrom:
				at0[i] = got(c, i)
			case burstAt:
				o.pre[i] = float64(got(c, i)-at0[i]) * 8 / float64(burstAt-preFrom)
				at1[i] = got(c, i)
			case burstTo:
				o.burst[i] = float64(got(c, i)-at1[i]) * 8 / float64(burstTo-burstAt)
			}
		}
		if o.firstPFC < 0 {
			for _, p := range c.Ports {
				if p.PFCTx[3] > 0 {
					o.firstPFC = now
					break
				}
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("%s: flow %d: %s", scheme, r.ID, r.Err)
		}
		o.fcts = append(o.fcts, r.End-r.Start)
		if r.ID >= 3 {
			o.burstEnd = max(o.burstEnd, r.End)
		}
	}
	for k, p := range e.Counters().Ports {
		o.ooo += p.OutOfSequence
		o.retx += p.Retransmits
		if p.PFCTx[3] > 0 {
			layer := "host"
			switch {
			case strings.HasPrefix(k.Device, "spine"):
				layer = "core"
			case k.Device == "leaf1":
				layer = "src-leaf"
			case k.Device == "leaf2":
				layer = "dst-leaf"
			}
			o.pauses[layer] += p.PFCTx[3]
		}
	}
	o.host = e.HostStats()
	o.flb = sumStats(sw.Made)
	return o
}

// sumStats adds the FLB modules' counters (first CNM: the earliest).
func sumStats(ms []lb.Module) flb.Stats {
	s := flb.Stats{FirstCNMNs: -1}
	for _, m := range ms {
		f, ok := m.(*flb.Module)
		if !ok {
			continue
		}
		x := f.Stats()
		s.NewFlows += x.NewFlows
		s.Reroutes += x.Reroutes
		s.Evictions += x.Evictions
		s.Samples += x.Samples
		s.CNMs += x.CNMs
		s.Relays += x.Relays
		s.AtSource += x.AtSource
		s.Isolated += x.Isolated
		s.Released += x.Released
		s.TimedOut += x.TimedOut
		s.HostNotices += x.HostNotices
		s.MaxHops = max(s.MaxHops, x.MaxHops)
		if x.FirstCNMNs >= 0 && (s.FirstCNMNs < 0 || x.FirstCNMNs < s.FirstCNMNs) {
			s.FirstCNMNs, s.FirstCNMQ, s.FirstCNMK, s.FirstCNMLink = x.FirstCNMNs, x.FirstCNMQ, x.FirstCNMK, x.FirstCNMLink
		}
	}
	return s
}

func (o microOutcome) String() string {
	return fmt.Sprintf("f0/f1/f2 %.1f/%.1f/%.1f Gb/s before the burst, %.1f/%.1f/%.1f during it; burst done at %.2f ms; PAUSE frames %v (first at %.2f ms); %d out of sequence, %d retransmitted",
		o.pre[0], o.pre[1], o.pre[2], o.burst[0], o.burst[1], o.burst[2], float64(o.burstEnd)/1e6, o.pauses, float64(o.firstPFC)/1e6, o.ooo, o.retx)
}
