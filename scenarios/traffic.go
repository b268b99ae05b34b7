package scenarios

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labctl/labctl/archive"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
	"github.com/labctl/labctl/reports"
)

// runPoint sends every host of the point its part of the schedule (the
// flows it sends or receives; the archive keeps the whole schedule once),
// reads their RNIC counters, runs every host's agent at once (agent sum,
// see shipAgents), streams their results into raw/ and flows.csv as each
// arrives (the tools' verbatim output stays in raw/ only), reads the
// counters again, and waits for telemetry to cover the traffic. It returns
// the point's record (also on error) and warnings that do not fail it
// (hosts that started flows late).
func (r *Runner) runPoint(ctx context.Context, runID, dir string, sess *session, sum string, pt *Point, flowsCSV io.Writer) (*reports.PointMeta, []string, error) {
	meta := pointMeta(pt)
	safe := safeName(pt.Name)
	ad := archive.Open(dir)
	if err := os.MkdirAll(ad.RawPoint(pt.Name), 0o755); err != nil {
		return meta, nil, err
	}
	remoteRun := agent.RunDir(runID)

	var targets []sshdrv.Target
	for _, h := range pt.Hosts {
		t, err := sess.target(h)
		if err != nil {
			return meta, nil, err
		}
		targets = append(targets, t)
	}
	rnics := sess.rnics
	var before []rnicSample
	if rnics {
		r.Progress.Stage(StageCounters, fmt.Sprintf("RNIC counters of %d hosts before the traffic", len(pt.Hosts)))
		before = sess.readRNICs(ctx, pt.Hosts)
	}
	// The epoch is set after the counters are read, so reading them does
	// not eat into the agents' lead.
	for i := range pt.Flows {
		pt.Flows[i].TClass = sess.tclass
	}
	// On hardware the lead must also cover sending the schedules (as long
	// as it last took in this session): the agents start after that, and
	// a flow whose time has passed starts late. The emulated twin starts
	// every flow on its own clock.
	lead := sess.lead
	if !sess.lab.Emulated {
		lead += sess.sendTook
	}
	sched := &perftest.Schedule{ID: runID + "/" + pt.Name, Epoch: time.Now().Add(lead).UTC(), Flows: pt.Flows}
	if err := writeSchedule(ad.Schedule(pt.Name), sched); err != nil {
		return meta, nil, err
	}
	total := len(pt.Flows)
	tctx, cancel := context.WithTimeout(ctx, r.PointTimeout)
	defer cancel()
	remoteSched := func(host string) string { return path.Join(remoteRun, safe+"."+host+".schedule.json") }
	if err := r.sendSchedules(tctx, sess, sched, targets, remoteSched); err != nil {
		return meta, nil, err
	}
	r.Progress.Stage(StageTraffic, fmt.Sprintf("%s: %d flows on %d hosts", pt.Name, total, len(pt.Hosts)))
	r.Progress.Flows(pt.Name, 0, total)
	var poll *rnicPoller
	if rnics && sess.rnicPoll > 0 {
		poll = sess.pollRNICs(tctx, pt.Hosts, sess.rnicPoll)
	}

	tally := &pointTally{pt: pt, meta: meta, csv: flowsCSV, run: runID}
	var gathering sync.Once // the first agent back: the traffic is over, its results come in
	// Every host's agent runs at once, not a pool's few at a time: each
	// waits for the common epoch, and a host that received a flow must
	// have its server up when the sender's client starts.
	err := allAtOnce(tctx, targets, func(ctx context.Context, t sshdrv.Target) error {
		remoteOut := path.Join(remoteRun, safe+"."+t.Name+".result.json.gz") // gzipped (agent.Compressed)
		res, err := sess.ssh.Exec(ctx, t, agentCommand(sum, remoteSched(t.Name), t.Name, remoteOut, r.MaxConcurrent))
		if err != nil {
			return err
		}
		gathering.Do(func() {
			r.Progress.Stage(StageGather, fmt.Sprintf("%s: agent results of %d hosts", pt.Name, len(targets)))
		})
		// Keep the agent's own output whatever happened: it is the evidence.
		_ = archive.WriteBytes(ad.AgentLog(pt.Name, t.Name), append(res.Stdout, res.Stderr...))
		if err := res.Err(); err != nil {
			return err
		}
		local := ad.AgentResult(pt.Name, t.Name)
		if err := sess.ssh.Download(ctx, t, remoteOut, local); err != nil {
			return fmt.Errorf("host %s: fetch agent result: %w", t.Name, err)
		}
		n, err := tally.add(local)
		if err != nil {
			return fmt.Errorf("host %s: agent result %s: %w", t.Name, remoteOut, err)
		}
		if n > 0 { // a host that only receives adds nothing to show
			r.Progress.Flows(pt.Name, tally.done(), total)
		}
		return nil
	})
	var during []rnicSample
	if poll != nil { // the traffic is over
		during = poll.stop()
	}
	if err != nil {
		// Leave nothing running on the hosts, then report.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sess.ssh.ForEach(cctx, targets, func(ctx context.Context, t sshdrv.Target) error {
			return cleanupAgents(ctx, sess.ssh, t, remoteRun)
		})
	}
	warnings := tally.finish()
	meta.TelemetryIntervalNs = int64(sess.interval)
	if rnics && err == nil {
		r.Progress.Stage(StageCounters, fmt.Sprintf("RNIC counters of %d hosts after the traffic (%d read during it)", len(pt.Hosts), len(during)))
		sess.writeRNICs(ctx, runID, before, during, sess.readRNICs(ctx, pt.Hosts), meta)
	}
	if tally.err != nil && err == nil {
		err = tally.err
	}
	if err != nil {
		return meta, warnings, err
	}
	if missing := total - tally.records; missing > 0 {
		return meta, warnings, fmt.Errorf("%d of %d flows reported no record", missing, total)
	}
	// Telemetry is asynchronous: wait until every switch has sent a sample
	// stamped after the last flow ended, so the report sees the whole point.
	r.Progress.Stage(StageTelemetry, fmt.Sprintf("%s: waiting for %d switches' samples to reach the traffic's end", pt.Name, len(sess.col.devices)))
	if lag := sess.col.sink.waitFor(ctx, sess.col.devices, time.Unix(0, meta.EndNs), 10*time.Second); len(lag) > 0 {
		r.Logger.Warn("telemetry lags behind traffic", "point", pt.Name, "devices", lag)
		meta.TelemetryLag = lag
	}
	return meta, warnings, nil
}

// pointTally adds up a point's agent results as they arrive: their
// records go to flows.csv (without the verbatim output, which stays in
// raw/), and into the point's time span, achieved load and late flows.
type pointTally struct {
	pt   *Point
	meta *reports.PointMeta
	csv  io.Writer
	run  string

	mu        sync.Mutex
	records   int
	loadBytes float64
	late      int
	lag       int64
	warnings  []string
	err       error // writing flows.csv
}

// flushEvery bounds the records held before they are written to flows.csv.
const flushEvery = 1024

// add streams one host's result file and returns how many records it had.
func (t *pointTally) add(file string) (int, error) {
	f, err := agent.OpenResult(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var batch []perftest.FlowRecord
	n := 0
	flush := func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if err := reports.WriteFlowsCSV(t.csv, t.run, t.pt.Name, batch); err != nil && t.err == nil {
			t.err = err
		}
		t.records += len(batch)
		batch = batch[:0]
	}
	var bytes float64
	head, err := agent.ReadRecords(f, func(h *agent.Result, rec perftest.FlowRecord) error { // the output stays in raw/
		n++
		t.span(rec)
		if t.pt.WindowNs > 0 && perftest.InWindow(rec, time.Unix(0, h.EpochNs), time.Duration(t.pt.WindowNs)) {
			bytes += float64(rec.Bytes)
		}
		if batch = append(batch, rec); len(batch) == flushEvery {
			flush()
		}
		return nil
	})
	flush() // what was read is recorded even when the rest is unreadable
	if err != nil {
		return n, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.loadBytes += bytes
	if head.Late > 0 {
		t.late += head.Late
		t.lag = max(t.lag, head.MaxLagNs)
		t.warnings = append(t.warnings, fmt.Sprintf("point %s: host %s started %d of %d flows more than %v after their time (up to %v): "+
			"the schedule asks for more flows than the host can start", t.pt.Name, head.Host, head.Late, n,
			time.Duration(head.LateToleranceNs), time.Duration(head.MaxLagNs)))
	}
	return n, nil
}

// span widens the point's [StartNs, EndNs] to cover rec.
func (t *pointTally) span(rec perftest.FlowRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.meta
	if rec.StartNs > 0 && (m.StartNs == 0 || rec.StartNs < m.StartNs) { // 0: never started
		m.StartNs = rec.StartNs
	}
	m.EndNs = max(m.EndNs, rec.EndNs)
}

func (t *pointTally) done() int { t.mu.Lock(); defer t.mu.Unlock(); return t.records }

// finish sets the point's achieved load and late flows and returns the
// warnings about late hosts.
func (t *pointTally) finish() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pt.WindowNs > 0 {
		t.meta.AchievedLoad = perftest.Load(t.loadBytes, len(t.pt.Hosts), t.pt.LinkGbps, time.Duration(t.pt.WindowNs))
	}
	if t.late > 0 {
		t.meta.LateFlows, t.meta.MaxStartLagNs = t.late, t.lag
	}
	return t.warnings
}

// Point statuses in the manifest.
const (
	pointOK     = "ok"
	pointFailed = "failed"
)

func pointMeta(pt *Point) *reports.PointMeta {
	m := &reports.PointMeta{
		Name: pt.Name, Pattern: pt.Pattern, Lab: pt.Lab, Hosts: len(pt.Hosts),
		BufferBytes: pt.BufferBytes, LinkGbps: pt.LinkGbps, Flows: pt.FlowCount,
		RequestedLoad: pt.RequestedLoad, Params: map[string]any{},
	}
	for k, v := range pt.Params {
		m.Params[k] = v
	}
	if pt.WindowNs > 0 {
		m.OfferedLoad, m.WindowNs = pt.OfferedLoad, pt.WindowNs
	}
	return m
}

// sendSchedules writes every target's part of sched (perftest.Schedule.
// ForHosts) to it at remote(host), a bounded number of hosts at a time.
func (r *Runner) sendSchedules(ctx context.Context, sess *session, sched *perftest.Schedule, targets []sshdrv.Target, remote func(string) string) error {
	hosts := make([]string, len(targets))
	for i, t := range targets {
		hosts[i] = t.Name
	}
	parts := sched.ForHosts(hosts)
	r.Progress.Stage(StageSchedules, fmt.Sprintf("sending %d hosts their parts of %d flows", len(targets), len(sched.Flows)))
	var bytes, flows atomic.Int64
	start := time.Now()
	defer func() { sess.sendTook = time.Since(start) }()
	err := sess.ssh.ForEach(ctx, targets, func(ctx context.Context, t sshdrv.Target) error {
		b, err := agent.AppendSchedule(nil, parts[t.Name])
		if err != nil {
			return err
		}
		bytes.Add(int64(len(b)))
		flows.Add(int64(len(parts[t.Name].Flows)))
		if err := sess.ssh.WriteFile(ctx, t, remote(t.Name), b, 0o600); err != nil {
			return fmt.Errorf("host %s: send schedule: %w", t.Name, err)
		}
		return nil
	})
	r.Progress.Stage(StageSchedules, fmt.Sprintf("%d hosts: %d flow entries, %d bytes", len(targets), flows.Load(), bytes.Load()))
	return err
}

// writeSchedule writes a point's whole schedule into the archive, as
// json.Encoder would (agent.WriteSchedule, and a final newline).
func writeSchedule(file string, sched *perftest.Schedule) error {
	return archive.WriteFile(file, func(w io.Writer) error {
		if err := agent.WriteSchedule(w, sched); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	})
}

// allAtOnce runs fn for every target concurrently. The first error (naming
// its device) stops the others, whose agents would wait in vain for that
// host's part of the point (its servers, or on an emulated lab its flows),
// and is returned.
func allAtOnce(ctx context.Context, targets []sshdrv.Target, fn func(context.Context, sshdrv.Target) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn(ctx, t)
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "device "+t.Name) && !strings.Contains(err.Error(), "host "+t.Name) {
				err = fmt.Errorf("device %s: %w", t.Name, err)
			}
			once.Do(func() { first = err; cancel() })
		}()
	}
	wg.Wait()
	return first
}
