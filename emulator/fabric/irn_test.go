package fabric

import (
	"math"
	"testing"
)

func TestIRNSingleFlowAtLineRate(t *testing.T) {
	e := pengine(t, 2, func(c *Config) { c.Transport = "irn" })
	r := run(t, e, []Flow{{ID: 1, Src: "h1", Dst: "h2", Bytes: 16 * mib}})[0]
	topo, _ := NewTopology(star(2, 100))
	ideal, _ := topo.IdealFCT(Flow{ID: 1, Src: "h1", Dst: "h2", Bytes: 16 * mib}, DefaultConfig())
	if got := float64(r.End - r.Start); math.Abs(got-float64(ideal)) > 2*(4096+82)*8/100.0 {
		t.Errorf("IRN on an idle path: FCT %.0f ns, ideal %d: the one-BDP window must not slow a lone flow", got, ideal)
	}
}

// TestIRNRepairsOnlyWhatWasLost: a lossy 64:1 incast (PFC off) completes
// with both transports; IRN retransmits only lost packets, go-back-N also
// resends what arrived after each loss.
func TestIRNRepairsOnlyWhatWasLost(t *testing.T) {
	counts := func(transport string) (drops, retx, ooo uint64) {
		e := pengine(t, 65, func(c *Config) {
			c.PFC, c.Transport, c.BufferBytes = false, transport, 2<<20
		})
		run(t, e, incast(64, 256<<10))
		for _, p := range e.Counters().Ports {
			drops, retx, ooo = drops+p.Drops, retx+p.Retransmits, ooo+p.OutOfSequence
		}
		return
	}
	gd, gr, _ := counts("gbn")
	id, ir, io := counts("irn")
	t.Logf("go-back-N: drops %d retransmits %d; IRN: drops %d retransmits %d out-of-sequence %d", gd, gr, id, ir, io)
	if id == 0 || ir < id {
		t.Errorf("IRN must repair its %d drops (retransmitted %d)", id, ir)
	}
	if ir >= gr {
		t.Errorf("IRN retransmitted %d, go-back-N %d: selective repeat should resend less", ir, gr)
	}
}
