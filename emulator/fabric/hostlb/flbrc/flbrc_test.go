package flbrc_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/hostlb/flbrc"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
)

// run runs flows on leafspine:2x2:4@40 with FLB on the switches and
// FLB+RC on the hosts, DCQCN off, sampling every sender's sent bytes at
// from and to (ns).
func run(t *testing.T, flows []fabric.Flow, from, to int64) (rates map[string]float64, hosts []*flbrc.Module, sw flb.Stats) {
	t.Helper()
	topo, _ := lbtest.Topology(t, "leafspine:2x2:4@40", nil)
	hreg := hostlb.NewRegistry()
	if err := flbrc.Register(hreg); err != nil {
		t.Fatal(err)
	}
	hs := &lbtest.Keep[hostlb.Module]{Make: hreg.New}
	ss := &lbtest.Keep[lb.Module]{Make: schemes.MustRegistry().New}
	cfg := fabric.DefaultConfig()
	cfg.DCQCN.Enabled = false
	cfg.LB, cfg.Modules, cfg.HostLB, cfg.HostModules = "flb", ss, "flbrc", hs
	cfg.HostLBParams = map[string]string{"restore_us": "0"} // the paper's rule: the rate follows n alone
	e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]uint64{}
	rates = map[string]float64{}
	res, err := e.Run(context.Background(), flows, fabric.RunOptions{SampleEvery: 10_000, OnSample: func(now int64, c *fabric.Counters) {
		for _, f := range flows {
			tx := c.Ports[fabric.PortKey{Device: f.Src, Port: "mlx5_0"}].TxBytes
			switch now {
			case from:
				at[f.Src] = tx
			case to:
				rates[f.Src] = float64(tx-at[f.Src]) * 8 / float64(to-from)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("flow %d: %s", r.ID, r.Err)
		}
	}
	for _, m := range hs.Made {
		hosts = append(hosts, m.(*flbrc.Module))
	}
	for _, m := range ss.Made {
		s := m.(*flb.Module).Stats()
		sw.CNMs += s.CNMs
		sw.HostNotices += s.HostNotices
	}
	return rates, hosts, sw
}

// TestCongestedFlowsRunAtCOverN (restore_us=0, the paper's rule): n long flows into one receiver (the
// first n on the receiver's leaf, then across the spines) congest its
// port; each sender, told n by its CNMs, pauses and then runs at C/n: in
// the 2 ms after the first millisecond every sender's rate is within
// 20 % of 40/n Gb/s, the n its module last took is the n of the run, and
// every host that paused resumed.
func TestCongestedFlowsRunAtCOverN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		srcs  []string
		local bool
	}{{"same leaf", []string{"h2", "h3", "h4"}, true}, {"across spines", []string{"h5", "h6", "h7", "h8"}, false}} {
		var flows []fabric.Flow
		for i, s := range tc.srcs {
			flows = append(flows, fabric.Flow{ID: i, Src: s, Dst: "h1", Bytes: 24 << 20, Priority: 3})
		}
		n := len(tc.srcs)
		rates, hosts, sw := run(t, flows, 1_000_000, 3_000_000)
		t.Logf("%s: rates %v Gb/s (C/n = %.1f); %d CNMs, %d forwarded to hosts", tc.name, rates, 40/float64(n), sw.CNMs, sw.HostNotices)
		for _, f := range flows {
			if r := rates[f.Src]; math.Abs(r-40/float64(n)) > 0.2*40/float64(n) {
				t.Errorf("%s: %s ran at %.2f Gb/s, want %.1f (C/n)", tc.name, f.Src, r, 40/float64(n))
			}
		}
		for i, h := range hosts {
			s := h.Stats()
			if s.Congestion == 0 {
				continue
			}
			if s.LastN != int64(n) || fmt.Sprintf("%.3f", s.LastRateGbps) != fmt.Sprintf("%.3f", 40/float64(n)) {
				t.Errorf("%s: host %d last took n=%d (rate %.2f), want %d", tc.name, i, s.LastN, s.LastRateGbps, n)
			}
			if s.Pauses == 0 || s.Resumes+s.TimedOut < s.Pauses-1 {
				t.Errorf("%s: host %d: %+v", tc.name, i, s)
			}
		}
	}
}
