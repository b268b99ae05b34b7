package fabric

import (
	"fmt"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"testing"
)

// TestPacketCountersConsistent runs small scenarios that exercise every
// counter the emulated gNMI targets and ethtool -S expose, and checks that
// each is non-zero where the scenario must produce it and that the two ends
// of every link agree.
func TestPacketCountersConsistent(t *testing.T) {
	topo := generated(t, "leafspine:2x4:8@100")
	// A 16:1 incast into h1 plus cross traffic between the other leaves.
	flows := incast(16, mib)
	for i := 0; i < 8; i++ {
		flows = append(flows, Flow{ID: 100 + i, Src: fmt.Sprintf("h%d", 17+i), Dst: fmt.Sprintf("h%d", 25+i), Bytes: 4 * mib})
	}
	sum := func(c *Counters, f func(*PortCounters) uint64) (n uint64) {
		for _, p := range c.Ports {
			n += f(p)
		}
		return n
	}

	t.Run("lossless", func(t *testing.T) {
		e := NewPacketEngine(topo, DefaultConfig())
		run(t, e, flows)
		c := e.Counters()
		// PAUSE frames and pause time: what a switch sends, its peer receives.
		var pauses uint64
		for _, l := range topo.links {
			tx, rx := c.Ports[PortKey{l.to, l.toPort}], c.Ports[PortKey{l.from, l.fromPort}]
			for p := 0; p < 8; p++ {
				if tx.PFCTx[p] != rx.PFCRx[p] {
					t.Errorf("%s:%s sent %d PAUSE on priority %d, %s:%s received %d", l.to, l.toPort, tx.PFCTx[p], p, l.from, l.fromPort, rx.PFCRx[p])
				}
				if d := int64(tx.PauseTxNs[p]) - int64(rx.PauseRxNs[p]); d < -1 || d > 1 {
					t.Errorf("%s:%s held its peer paused %d ns, %s:%s was paused %d ns", l.to, l.toPort, tx.PauseTxNs[p], l.from, l.fromPort, rx.PauseRxNs[p])
				}
				if tx.PFCTx[p] > 0 && tx.PauseTxNs[p] == 0 {
					t.Errorf("%s:%s sent PAUSE but counts no pause time", l.to, l.toPort)
				}
			}
			pauses += tx.PFCTx[3]
		}
		marks := sum(c, func(p *PortCounters) uint64 { return p.ECNMarked })
		queueMarks := sum(c, func(p *PortCounters) uint64 { return p.Queues[3].ECNMarked })
		received := sum(c, func(p *PortCounters) uint64 { return p.ECNReceived[3] })
		sent := sum(c, func(p *PortCounters) uint64 { return p.CNPSent })
		handled := sum(c, func(p *PortCounters) uint64 { return p.CNPHandled })
		t.Logf("PAUSE %d, ECN marks %d, CE received %d, CNPs sent %d handled %d", pauses, marks, received, sent, handled)
		if pauses == 0 || marks == 0 || sent == 0 {
			t.Fatalf("a 16:1 incast with PFC and DCQCN must PAUSE (%d), mark (%d) and send CNPs (%d)", pauses, marks, sent)
		}
		// Lossless: every marked packet reaches its receiver.
		if marks != queueMarks || received != marks {
			t.Errorf("ECN marks: ports %d, queues %d, received by hosts %d", marks, queueMarks, received)
		}
		// At most one CNP per marked packet; a CNP still in flight when the
		// last flow completes is never handled.
		if sent > received || handled > sent || sent-handled > uint64(len(flows)) {
			t.Errorf("CNPs: %d marked packets received, %d CNPs sent, %d handled", received, sent, handled)
		}
		h1 := c.Ports[PortKey{"leaf1", topo.links[topo.out["h1"][0]].toPort}]
		if q := h1.Queues[3]; q.WatermarkBytes < 100_000 || q.DepthBytes != 0 {
			t.Errorf("the incast's egress queue: watermark %d B (want above Kmin), depth after the run %d B (want 0)", q.WatermarkBytes, q.DepthBytes)
		}
		if n := sum(c, func(p *PortCounters) uint64 { return p.Drops + p.Retransmits + p.OutOfSequence }); n != 0 {
			t.Errorf("lossless run: drops + retransmits + out-of-sequence = %d", n)
		}
	})

	t.Run("lossy-spraying", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.PFC, cfg.BufferBytes, cfg.LB, cfg.Modules = false, 1<<20, "drill", schemes.MustRegistry()
		e, err := NewPacketEngineLB(topo, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		run(t, e, flows)
		c := e.Counters()
		drops := sum(c, func(p *PortCounters) uint64 { return p.Drops })
		var queueDrops, dataDrops uint64
		for _, p := range c.Ports {
			for q := range p.Queues {
				queueDrops += p.Queues[q].Drops
			}
			dataDrops += p.Queues[3].Drops
		}
		retx := sum(c, func(p *PortCounters) uint64 { return p.Retransmits })
		ooo := sum(c, func(p *PortCounters) uint64 { return p.OutOfSequence })
		t.Logf("drops %d (data %d), retransmits %d, out of sequence %d", drops, dataDrops, retx, ooo)
		if drops == 0 || ooo == 0 {
			t.Fatalf("a lossy, sprayed incast must drop (%d) and reorder (%d)", drops, ooo)
		}
		if queueDrops != drops {
			t.Errorf("drops: ports %d, queues %d", drops, queueDrops)
		}
		// Every flow completed, so every dropped data packet was sent again.
		if retx < dataDrops {
			t.Errorf("%d data packets dropped but only %d retransmitted", dataDrops, retx)
		}
		if n := sum(c, func(p *PortCounters) uint64 { return p.PFCTx[3] + p.PFCRx[3] }); n != 0 {
			t.Errorf("PFC off, yet %d PAUSE frames counted", n)
		}
	})
}
