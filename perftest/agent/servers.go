package agent

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/labctl/labctl/perftest"
)

// servers starts the perftest servers of the flows a host receives: each
// ServerLead before its flow is due, in offset order, at most MaxServers
// at once, and one at a time per port (a host that receives more flows
// than there are ports gets ports reused, in turn: see the perftest patterns). A host
// receiving tens of thousands of flows thus never runs a process per flow
// up front.
type servers struct {
	o     Options
	ps    *procs
	epoch time.Time
	// stop is closed when the grace period is over: start no more.
	stop chan struct{}
	// exited reports a server's run (ok: it exited 0), or a server that
	// was never started (StartNs 0).
	exited func(f perftest.Flow, sr ServerRun, ok bool)
}

// run starts the servers of flows one after the other and returns when
// the last has started (or the run is over); wg covers their waits.
func (s *servers) run(ctx context.Context, flows []perftest.Flow, wg *sync.WaitGroup) {
	flows = append([]perftest.Flow(nil), flows...)
	sort.SliceStable(flows, func(i, j int) bool { return flows[i].Offset < flows[j].Offset })
	slots := make(chan struct{}, s.o.MaxServers)
	busy := map[int]chan struct{}{} // port -> closed when its last server exited
	for i, f := range flows {
		why := s.await(ctx, s.epoch.Add(f.Offset-s.o.ServerLead), slots, busy[f.Port])
		if why != "" { // the run is over: none of the rest starts
			for _, g := range flows[i:] {
				s.exited(g, notStarted(g, why), false)
			}
			return
		}
		exited, err := s.start(f, slots, wg)
		if err != nil { // this one could not start; the next may
			<-slots
			s.exited(f, notStarted(f, fmt.Sprintf("start %s: %v", f.Tool, err)), false)
			continue
		}
		busy[f.Port] = exited
	}
}

// start starts f's server, holding a slot that it frees on exit, and
// returns a channel closed then.
func (s *servers) start(f perftest.Flow, slots chan struct{}, wg *sync.WaitGroup) (chan struct{}, error) {
	sr := ServerRun{FlowID: f.ID}
	cmd, stdout, stderr := command(s.o, perftest.Args(f, perftest.Server))
	sr.StartNs = s.o.Now().UnixNano()
	if err := s.ps.start(cmd); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := cmd.Wait()
		s.ps.done(cmd)
		sr.EndNs = s.o.Now().UnixNano()
		sr.Output, sr.Stderr, sr.ExitCode = stdout.String(), stderr.String(), exitCode(err)
		<-slots
		close(exited)
		s.exited(f, sr, err == nil)
	}()
	return exited, nil
}

func notStarted(f perftest.Flow, why string) ServerRun {
	return ServerRun{FlowID: f.ID, ExitCode: -1, Stderr: "labctl agent: server not started: " + why + "\n"}
}

// await waits until at, then for a slot and for port to be free. It
// returns "" when the server may start (holding a slot), else why not.
func (s *servers) await(ctx context.Context, at time.Time, slots chan struct{}, port chan struct{}) string {
	if port != nil {
		select {
		case <-port:
		case <-ctx.Done():
			return ctx.Err().Error()
		case <-s.stop:
			return "no client connected in time"
		}
	}
	if wait := at.Sub(s.o.Now()); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err().Error()
		case <-s.stop:
			return "no client connected in time"
		}
	}
	select {
	case slots <- struct{}{}:
		return ""
	case <-ctx.Done():
		return ctx.Err().Error()
	case <-s.stop:
		return "no client connected in time"
	}
}
