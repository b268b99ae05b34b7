package scenarios

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

// LabSource opens the lab a variant runs on: lab is a lab file, generated
// topology or running lab's name, em the variant's emulation section (an
// emulated lab is started with it; a hardware lab ignores it). release
// frees what Open started. The CLI implements it; scenarios cannot start
// emulated labs themselves (they must not import the emulator).
type LabSource interface {
	Open(ctx context.Context, lab string, em Emulation) (l *inventory.Lab, release func(), err error)
}

// session is one open lab and what the runner keeps for it: consecutive
// variants that name the same lab and emulation share it.
type session struct {
	key      string
	lab      *inventory.Lab
	ssh      *sshdrv.Pool
	release  func() // nil: the lab and pool belong to the caller
	col      *collectorSet
	shipped  map[string]bool // hosts that have the agent
	agentSum string          // SHA-256 of the agent binary (Runner.AgentPath)
	// sendTook is how long sending a point's schedules last took (before
	// the first point: checking the hosts for the agent, as many round
	// trips); a hardware point's epoch lead adds it.
	sendTook time.Duration
	provKey  string        // the provisioning in force, "" when none is known
	interval time.Duration // telemetry sample interval
	rnicPoll time.Duration // RNIC counter poll interval during traffic; 0: none
	lead     time.Duration // epoch lead
	rnics    bool          // read RNIC counters around each point
	lastRNIC time.Time     // newest rnic sample written, to keep them in order
	// tclass is the RoCE ToS the provisioned RNIC profile set (0: none):
	// every flow sends with it (perftest --tclass), as labctl's perftest
	// QPs are not RDMA-CM ones, which alone take cma_roce_tos.
	tclass int
}

// labKey names what a variant needs of a lab.
func labKey(s *Scenario) string {
	b, _ := json.Marshal(s.Emulation)
	return cmp.Or(s.Lab, DefaultLab) + " " + string(b)
}

// session returns the session for s: cur when s needs the same lab, else
// a new one (cur is closed first). Without a LabSource every variant runs
// on the runner's Lab, and a variant needing another fails.
func (st *runState) session(ctx context.Context, cur *session, s *Scenario, first bool) (*session, error) {
	r := st.r
	key := labKey(s)
	if cur != nil && cur.key == key {
		return cur, nil
	}
	st.closeSession(ctx, cur)
	sess := &session{key: key, shipped: map[string]bool{}}
	switch {
	case r.Labs != nil:
		name := cmp.Or(s.Lab, DefaultLab)
		lab, release, err := r.Labs.Open(ctx, name, s.Emulation)
		if err != nil {
			return nil, fmt.Errorf("open lab %s: %w", name, err)
		}
		sess.lab, sess.release = lab, release
		sess.ssh = sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: r.Logger})
	case first || st.fixedKey == key:
		st.fixedKey = key
		sess.lab, sess.ssh = r.Lab, r.SSH
	default:
		return nil, fmt.Errorf("variant needs lab %s, but this runner has only lab %s and no LabSource to open others", key, r.Lab.Name)
	}
	sess.interval = s.Interval(sess.lab.Emulated)
	sess.rnics = !st.s.Telemetry.Disabled
	sess.rnicPoll = s.RNICInterval(sess.lab.Emulated)
	sess.lead = r.EpochLead
	if sess.lead == 0 {
		sess.lead = 2 * time.Second
		if sess.lab.Emulated {
			sess.lead = 300 * time.Millisecond
		}
	}
	return sess, nil
}

// closeSession stops the session's collectors (folding what they report
// into the run's telemetry meta) and releases its lab.
func (st *runState) closeSession(ctx context.Context, sess *session) {
	<-st.releaseSession(ctx, sess)
}

// releaseSession stops the session's collectors, as closeSession does, and
// releases its lab in the background: the returned channel is closed once
// the release has ended. What comes after (the analysis) reads only the
// archive, so it need not wait for a lab of a thousand SSH servers to stop
// and its directory to be removed; the run waits for both (awaitRelease).
func (st *runState) releaseSession(ctx context.Context, sess *session) <-chan struct{} {
	done := make(chan struct{})
	if sess != nil && sess.col != nil {
		st.m.Telemetry = mergeTelemetry(st.m.Telemetry, sess.col.stop(ctx))
	}
	if sess == nil || sess.release == nil {
		close(done)
		return done
	}
	st.r.Progress.Stage(StageRelease, sess.lab.Name)
	go func() {
		defer close(done)
		sess.ssh.Close()
		sess.release()
	}()
	return done
}

// awaitRelease waits for a lab's release (releaseSession) to end, saying
// so as a release stage when it has not yet: the stages then show what
// the run waited for after its analysis.
func (st *runState) awaitRelease(released <-chan struct{}, lab string) {
	select {
	case <-released:
		return
	default:
	}
	st.r.Progress.Stage(StageRelease, lab+": waiting for it to stop")
	<-released
}

func mergeTelemetry(a, b *reports.TelemetryMeta) *reports.TelemetryMeta {
	if a == nil {
		return b
	}
	seen := map[string]bool{}
	for _, d := range a.Devices {
		seen[d] = true
	}
	for _, d := range b.Devices {
		if !seen[d] {
			a.Devices = append(a.Devices, d)
		}
	}
	a.Points += b.Points
	a.Errors = append(a.Errors, b.Errors...)
	mergeHealth(a, b)
	return a
}

// target is how to reach a device of the session's lab over SSH.
func (sess *session) target(name string) (sshdrv.Target, error) {
	return sshdrv.DeviceTarget(sess.lab, name, sshdrv.EndpointSSH)
}
