package emulator

import (
	"time"

	"github.com/labctl/labctl/emulator/fabric"
)

// simSampler publishes one schedule's samples on the simulated timeline:
// the counters before any flow starts at the epoch (sim time 0), then one
// snapshot per sample interval on the grid epoch + k x interval while
// traffic is simulated, and the final counters at the first grid instant
// at or after the last flow's end, so a collector waiting for the point's
// end sees it. Every path thus gets one sample per interval over the
// simulated window, whatever the wall time the simulation takes. Called
// with t.mu held (simulate).
type simSampler struct {
	t     *Twin
	id    string // the schedule's
	base  time.Time
	every int64 // ns of sim time between samples; 0: none between the first and the last
	// last is the sim time of the newest sample published, -1 before any.
	last int64
	// coalesced is the targets' count when the schedule began.
	coalesced uint64
	samples   int // published
}

func (t *Twin) startSampling(id string, base time.Time) *simSampler {
	s := &simSampler{t: t, id: id, base: base, every: int64(t.sampleInterval()), last: -1, coalesced: t.coalesced()}
	t.idleDone = false // the counters are about to change
	s.sample(0, t.engine.Counters())
	return s
}

// sample is fabric.RunOptions.OnSample. The engines call it on the grid,
// and once more at their last event, off the grid: that one goes to the
// next grid instant.
func (s *simSampler) sample(now int64, c *fabric.Counters) {
	at := now
	if s.every > 0 {
		at = (now + s.every - 1) / s.every * s.every
		if at <= s.last {
			at = s.last + s.every
		}
	} else if at <= s.last {
		at = s.last + 1
	}
	s.last = at
	s.samples++
	s.t.publishLocked(s.base.Add(time.Duration(at)), c, false)
}

// finish makes sure a sample stands at or after end, the last flow's end
// (the flow engine ends a flow a propagation delay after its last event),
// and reports samples the targets coalesced since the schedule began (as
// far as their subscribers have sent them).
func (s *simSampler) finish(end int64) {
	if s.last < end {
		s.sample(end, s.t.engine.Counters())
	}
	s.t.pub.flush() // the point's telemetry is with the switches before its agents hear back
	if n := s.t.coalesced() - s.coalesced; n > 0 {
		s.t.log.Warn("gnmi targets coalesced samples of the schedule (collectors record collector_gap points)", "schedule", s.id, "samples", n)
	}
}

// coalesced is the switches' targets' count of samples lost to coalescing.
func (t *Twin) coalesced() uint64 {
	var n uint64
	for _, p := range t.switches {
		n += p.Coalesced()
	}
	return n
}
