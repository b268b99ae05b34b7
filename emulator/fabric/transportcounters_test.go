package fabric

import "testing"

// transportSums adds up the RNIC transport counters of every host port.
type transportSums struct{ naks, timeouts, dups, ooo, retx uint64 }

func sumTransport(c *Counters) (s transportSums) {
	for k, p := range c.Ports {
		if k.Device == "sw" {
			continue
		}
		s.naks += p.NAKReceived
		s.timeouts += p.AckTimeouts
		s.dups += p.DuplicateRequests
		s.ooo += p.OutOfSequence
		s.retx += p.Retransmits
	}
	return s
}

// TestTransportErrorCounters: a lossless incast has no NAK, timeout or
// duplicate; a lossy one repairs its drops through NAKs and timeouts, each
// NAK answering an out-of-order arrival, for both transports. The lossy
// senders start a few ns apart: in perfect lockstep the same senders win
// every free buffer slot, each flow loses only a suffix of its packets,
// and nothing ever arrives out of order.
func TestTransportErrorCounters(t *testing.T) {
	e := pengine(t, 65, func(c *Config) { c.DCQCN.Enabled = false })
	run(t, e, incast(64, 256<<10))
	c := e.Counters()
	if !c.Transport {
		t.Error("the packet engine keeps transport counters: Transport must be set")
	}
	if s := sumTransport(c); s != (transportSums{}) {
		t.Errorf("lossless incast: %+v, want all zero", s)
	}

	for _, transport := range []string{"gbn", "irn"} {
		e := pengine(t, 65, func(c *Config) {
			c.PFC, c.DCQCN.Enabled, c.Transport, c.BufferBytes = false, false, transport, 2<<20
		})
		flows := incast(64, 256<<10)
		for i := range flows {
			flows[i].Start = int64(i * 7)
		}
		run(t, e, flows)
		s := sumTransport(e.Counters())
		t.Logf("%s: %+v", transport, s)
		if s.retx == 0 || s.naks+s.timeouts == 0 {
			t.Errorf("%s: %d retransmits from %d NAKs and %d timeouts; want retransmits caused by either", transport, s.retx, s.naks, s.timeouts)
		}
		if s.naks == 0 || s.naks > s.ooo {
			t.Errorf("%s: %d NAKs received for %d out-of-order arrivals; want 0 < NAKs <= arrivals", transport, s.naks, s.ooo)
		}
	}
}

func TestFlowEngineKeepsNoTransportCounters(t *testing.T) {
	e := engine(t, star(3, 100), nil)
	run(t, e, incast(2, mib))
	if e.Counters().Transport {
		t.Error("the flow engine models no transport: Transport must be false")
	}
}
