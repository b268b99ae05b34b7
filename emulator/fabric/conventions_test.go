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

// TestPFCPauseQuantaAndRefresh drives one PAUSE episode of a switch
// ingress by hand: the PAUSE carries its quanta (512 bit times each), the
// switch refreshes it every half pause time while in XOFF and sends RESUME
// at XON; the upstream port stays paused throughout and counts every frame
// the switch sent. Without a refresh in time, the upstream port resumes by
// itself when the quanta run out.
func TestPFCPauseQuantaAndRefresh(t *testing.T) {
	t.Parallel()
	const quanta = 1000 // 5.12 us at 100 Gb/s
	for _, tc := range []struct {
		name      string
		refreshNs int64
		frames    uint64 // sent by the switch over the episode
		pausedNs  float64
	}{
		// XOFF at 0, XON at 40 us: PAUSE at 0, refreshes every 2.56 us
		// (15 of them before 40 us), RESUME: the upstream is paused from
		// the first frame's arrival to the RESUME's, 40 us.
		{"refreshed", 0, 1 + 15 + 1, 40_000},
		// No refresh within the pause time: the upstream resumes 5.12 us
		// after the PAUSE arrives, though the switch stays in XOFF.
		{"expires", 1_000_000, 1 + 1, 5120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := pengine(t, 2, func(c *Config) { c.PauseQuanta, c.PauseRefreshNs = quanta, tc.refreshNs })
			var li int32 = -1
			for i, l := range e.links {
				if l.from == "h1" {
					li = int32(i)
				}
			}
			l := &e.links[li]
			if got := pauseNs(quanta, l.rate); got != 5120 {
				t.Fatalf("%d quanta at %.0f Gb/s pause %.0f ns, want 5120", quanta, l.rate, got)
			}
			step := func(until int64) { // the engine's loop, PFC events only
				for e.ev.len() > 0 {
					ev := e.ev.pop()
					if ev.t > until {
						e.ev.push(ev)
						return
					}
					e.now = ev.t
					e.onPFC(ev)
				}
			}
			l.xoffSent[3] = true
			e.sendPFC(li, 3, true)
			step(4_000_000) // ps
			if !l.paused[3] {
				t.Fatal("the upstream port is not paused 4 us after PAUSE")
			}
			step(39_999_000)
			if l.paused[3] != (tc.refreshNs == 0) {
				t.Errorf("at 40 us in XOFF the upstream port is paused=%v", l.paused[3])
			}
			e.now = 40_000_000 // ps: the ingress falls to XON
			l.xoffSent[3] = false
			e.sendPFC(li, 3, false)
			step(100_000_000)
			if l.paused[3] {
				t.Error("the upstream port is still paused after RESUME")
			}
			tx, rx := e.lto[li], e.lfrom[li]
			if tx.pfcTx[3] != float64(tc.frames) || rx.pfcRx[3] != tx.pfcTx[3] {
				t.Errorf("frames: switch sent %.0f, upstream received %.0f; want %d both", tx.pfcTx[3], rx.pfcRx[3], tc.frames)
			}
			if rx.pauseRxNs[3] != tc.pausedNs || tx.pauseTxNs[3] != 40_000 {
				t.Errorf("upstream paused %.0f ns (want %.0f), switch in XOFF %.0f ns (want 40000)", rx.pauseRxNs[3], tc.pausedNs, tx.pauseTxNs[3])
			}
		})
	}
}
