package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// maxPolled bounds the samples one point's polling keeps (a sample holds
// an RNIC's few dozen counters): an hour of 1 s rounds of 12 RNICs.
const maxPolled = 50_000

// pollDuty is how many times its own duration the poller rests after a
// round, at least.
const pollDuty = 4

// rnicPoller reads the hosts' RNIC counters (readRNICs: hw_counters and
// ethtool -S) every interval while a point's traffic runs. Rounds never
// overlap, so a host has at most one poll in flight beside its agent, and
// after a round that took d the next waits at least pollDuty*d: polling
// many hosts keeps to a fifth of the time, however short the interval,
// and leaves the rest to the agents (and to an emulated lab's twin). What it reads is
// written after the traffic (writeRNICs), stamped into the point's
// window: an emulated lab's twin runs on a timeline of its own, and the
// window is known only once the flows' records are in. A host that fails
// a read gives a failed sample, recorded as a gap; reads cut short by the
// end of the stage are dropped, as that is no failure of the host.
type rnicPoller struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples []rnicSample
}

// pollRNICs starts polling hosts every interval until stop or ctx ends.
func (sess *session) pollRNICs(ctx context.Context, hosts []string, every time.Duration) *rnicPoller {
	ctx, cancel := context.WithCancel(ctx)
	p := &rnicPoller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		wait := every
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			began := time.Now()
			round := sess.readRNICs(ctx, hosts)
			wait = max(every, pollDuty*time.Since(began))
			if ctx.Err() != nil {
				round = slices.DeleteFunc(round, func(s rnicSample) bool { return s.err != nil })
			}
			if len(p.samples)+len(round) > maxPolled {
				for _, h := range hosts {
					p.samples = append(p.samples, rnicSample{host: h, at: time.Now(),
						err: fmt.Errorf("host %s: RNIC counters no longer polled: the point's bound of %d samples is reached", h, maxPolled)})
				}
				return
			}
			p.samples = append(p.samples, round...)
		}
	}()
	return p
}

// stop ends the polling and returns the samples read, oldest first.
func (p *rnicPoller) stop() []rnicSample {
	p.cancel()
	<-p.done
	return p.samples
}
