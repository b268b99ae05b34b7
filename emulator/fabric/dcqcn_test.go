package fabric

import (
	"context"
	"fmt"
	"testing"
)

// TestDCQCNKeepsTheQueueBelowPFC: four long flows into one port. Without
// DCQCN the bottleneck queue sits at the PFC threshold and PAUSE frames
// flow; with it, ECN marks and CNPs hold the queue in the ECN band and no
// PAUSE is needed after the first round trip, the link stays busy, and the
// flows share it fairly.
func TestDCQCNKeepsTheQueueBelowPFC(t *testing.T) {
	type outcome struct {
		pfc, pfcMid, cnpSent, cnpHandled uint64
		meanDepth, maxDepth              uint64
		util, jain                       float64
	}
	run := func(dcqcn bool) outcome {
		e := pengine(t, 5, func(c *Config) { c.DCQCN.Enabled = dcqcn })
		var o outcome
		var sum, n, rx0, rx1, pfc0, pfc1 uint64
		var tx0, tx1 [4]uint64
		const from, to = 5_000_000, 15_000_000
		_, err := e.Run(context.Background(), incast(4, 64*mib), RunOptions{SampleEvery: 10_000, OnSample: func(now int64, c *Counters) {
			p := c.Ports[PortKey{"sw", "1/0"}]
			var pfc uint64
			for _, pc := range c.Ports {
				pfc += pc.PFCTx[3]
			}
			switch now {
			case from:
				rx0, pfc0 = p.TxBytes, pfc
				for i := range tx0 {
					tx0[i] = c.Ports[PortKey{fmt.Sprintf("h%d", i+2), "mlx5_0"}].TxBytes
				}
			case to:
				rx1, pfc1 = p.TxBytes, pfc
				for i := range tx1 {
					tx1[i] = c.Ports[PortKey{fmt.Sprintf("h%d", i+2), "mlx5_0"}].TxBytes
				}
			}
			if now > from && now <= to {
				sum += p.Queues[3].DepthBytes
				n++
				o.maxDepth = max(o.maxDepth, p.Queues[3].DepthBytes)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range e.Counters().Ports {
			o.pfc += p.PFCTx[3]
			o.cnpSent += p.CNPSent
			o.cnpHandled += p.CNPHandled
		}
		o.meanDepth, o.util, o.pfcMid = sum/n, float64(rx1-rx0)*8/float64(to-from)/100, pfc1-pfc0
		var s1, s2 float64
		for i := range tx0 {
			x := float64(tx1[i] - tx0[i])
			s1, s2 = s1+x, s2+x*x
		}
		o.jain = s1 * s1 / (4 * s2)
		return o
	}
	off, on := run(false), run(true)
	t.Logf("without DCQCN: %+v", off)
	t.Logf("with DCQCN:    %+v", on)
	if off.pfc == 0 || off.meanDepth < 256<<10 {
		t.Errorf("without DCQCN the queue should sit at the PFC threshold: %+v", off)
	}
	if on.pfcMid != 0 || on.pfc > off.pfc/100 {
		t.Errorf("with DCQCN only the start-up burst may need PAUSE: %d in all, %d mid-run", on.pfc, on.pfcMid)
	}
	if on.jain < 0.95 {
		t.Errorf("DCQCN flows should share the port fairly: Jain index %.3f", on.jain)
	}
	if on.cnpSent == 0 || on.cnpSent != on.cnpHandled {
		t.Errorf("CNPs sent %d, handled %d", on.cnpSent, on.cnpHandled)
	}
	if on.meanDepth > 400_000 || on.meanDepth >= off.meanDepth/4 {
		t.Errorf("with DCQCN the mean queue (%d B) should stay in the ECN band (Kmax 400 KB), far below PFC's (%d B)", on.meanDepth, off.meanDepth)
	}
	if on.util < 0.95 || off.util < 0.95 {
		t.Errorf("link use with DCQCN %.2f, without %.2f; want >= 0.95", on.util, off.util)
	}
}

// TestDCQCNIncastKeepsTheLinkBusy: a 16:1 incast of 1 MiB flows with
// DCQCN on the emulated lab's leaf-spine. The start-up burst builds a queue
// of megabytes; while it drains, CNPs keep coming and the senders are cut
// to a crawl, and they recover on the RPG_TIME_RESET timer. A flow's rate
// is back to at least half its target one timer period after its last cut,
// so the receiver's link may never sit idle longer than that while flows
// are unfinished (it did when the pacing gap of a crawling flow was not
// re-timed at the recovered rate), and every byte crosses it.
func TestDCQCNIncastKeepsTheLinkBusy(t *testing.T) {
	topo := generated(t, "leafspine:2x4:8@100")
	flows := incast(16, mib)
	cfg := DefaultConfig()
	e := NewPacketEngine(topo, cfg)
	const every = 10_000 // ns
	var last, idle, longest int64
	res, err := e.Run(context.Background(), flows, RunOptions{SampleEvery: every, OnSample: func(now int64, c *Counters) {
		rx := int64(c.Ports[PortKey{"h1", "mlx5_0"}].RxBytes)
		if rx == last {
			idle += every
			longest = max(longest, idle)
		} else {
			idle = 0
		}
		last = rx
	}})
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("flow %d: %s", r.ID, r.Err)
		}
		end = max(end, r.End)
	}
	t.Logf("last flow ends at %d us (%.1f Gb/s of goodput); longest idle spell of the receiver link %d us", end/1000,
		float64(16*mib*8)/float64(end), longest/1000)
	if longest >= cfg.DCQCN.RPGTimeResetNs {
		t.Errorf("the receiver's link sat idle for %d us with flows unfinished; DCQCN recovers within RPG_TIME_RESET (%d us)",
			longest/1000, cfg.DCQCN.RPGTimeResetNs/1000)
	}
	if want := uint64(16*mib + 16*256*82); e.Counters().Ports[PortKey{"h1", "mlx5_0"}].RxBytes != want {
		t.Errorf("receiver got %d bytes on the wire, want %d", e.Counters().Ports[PortKey{"h1", "mlx5_0"}].RxBytes, want)
	}
}
