package fabric

import "testing"

// TestCNPGeneration: with MinTimeBetweenCNPs 0 (the default, the papers'
// ns-3 code bases) a receiver answers every ECN-marked packet with a CNP;
// with ConnectX's 4 us it sends at most one per QP per 4 us, fewer than the
// marked packets.
func TestCNPGeneration(t *testing.T) {
	t.Parallel()
	if d := DefaultConfig().DCQCN.MinTimeBetweenCNPsNs; d != 0 {
		t.Errorf("default MinTimeBetweenCNPs %d ns, want 0 (a CNP per marked packet, as the ns-3 code bases)", d)
	}
	const senders = 4
	for _, gapNs := range []int64{0, 4000} {
		e := pengine(t, senders+1, func(c *Config) { c.DCQCN.MinTimeBetweenCNPsNs = gapNs })
		res := run(t, e, incast(senders, 4*mib))
		p := e.Counters().Ports[PortKey{"h1", "mlx5_0"}]
		marked, cnps := p.ECNReceived[3], p.CNPSent
		if marked == 0 || p.OutOfSequence != 0 {
			t.Fatalf("gap %d ns: %d marked packets, %d out of order; want a lossless incast with marking", gapNs, marked, p.OutOfSequence)
		}
		var first, last int64 = res[0].Start, 0
		for _, r := range res {
			first, last = min(first, r.Start), max(last, r.End)
		}
		t.Logf("gap %d ns: %d CNPs for %d marked packets over %d ns", gapNs, cnps, marked, last-first)
		switch gapNs {
		case 0:
			if cnps != marked {
				t.Errorf("per marked packet: %d CNPs for %d marked packets", cnps, marked)
			}
		default:
			if most := uint64(senders * ((last-first)/gapNs + 1)); cnps > most || cnps >= marked {
				t.Errorf("one per QP per %d ns: %d CNPs for %d marked packets (at most %d, fewer than marked)", gapNs, cnps, marked, most)
			}
		}
	}
}

// TestGoBackNRenacks: in a lossy incast (PFC off) a go-back-N receiver
// that keeps getting packets beyond a lost one NACKs it again every
// NackInterval (the default, as the ns-3 code bases), so a retransmission
// lost again is repaired within microseconds; with one NACK per expected
// PSN (negative interval) it waits for the sender's retransmission timeout.
// The ns-3 NACK carries a CNP (CNPOnNack): without it the re-sent NACKs
// send the senders back again and again at full rate, and the incast ends
// later than with a single NACK.
func TestGoBackNRenacks(t *testing.T) {
	t.Parallel()
	type outcome struct {
		naks, timeouts uint64
		last           int64
	}
	measure := func(interval int64, cnp bool) outcome {
		e := pengine(t, 33, func(c *Config) {
			c.PFC, c.BufferBytes, c.NackIntervalNs, c.CNPOnNack = false, 1<<20, interval, cnp
		})
		var o outcome
		for _, r := range run(t, e, incast(32, 256<<10)) {
			o.last = max(o.last, r.End)
		}
		for _, p := range e.Counters().Ports {
			o.naks, o.timeouts = o.naks+p.NAKReceived, o.timeouts+p.AckTimeouts
		}
		return o
	}
	renack, once, storm := measure(0, true), measure(-1, true), measure(0, false)
	t.Logf("re-NACK every 4 us: %d NAKs, %d timeouts, last flow ends at %d us; once per PSN: %d NAKs, %d timeouts, %d us; re-NACK without CNP: %d NAKs, %d timeouts, %d us",
		renack.naks, renack.timeouts, renack.last/1000, once.naks, once.timeouts, once.last/1000, storm.naks, storm.timeouts, storm.last/1000)
	if renack.naks <= once.naks {
		t.Errorf("re-NACKing sent %d NACKs, no more than once per PSN (%d)", renack.naks, once.naks)
	}
	if renack.timeouts >= once.timeouts || renack.last >= once.last {
		t.Errorf("re-NACKing: %d timeouts, done at %d us; once per PSN: %d, %d us; want fewer timeouts and an earlier end",
			renack.timeouts, renack.last/1000, once.timeouts, once.last/1000)
	}
	if storm.last <= once.last {
		t.Errorf("re-NACKing without a CNP ends at %d us, not after a single NACK's %d us: CNPOnNack is not what keeps it useful", storm.last/1000, once.last/1000)
	}
}
