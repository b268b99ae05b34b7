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

