package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
	"github.com/labctl/labctl/reports"
)

// runPoint ships the point's schedule to every host taking part, reads
// their RNIC counters, runs the agents in parallel, gathers their results
// into raw/ and flows.csv, reads the counters again, and waits for
// telemetry to cover the traffic. It returns the point's record (also on
// error) and warnings that do not fail it (hosts that started flows late).
func (r *Runner) runPoint(ctx context.Context, runID, dir string, sess *session, pt *Point, flowsCSV io.Writer) (*reports.PointMeta, []string, error) {
	meta := pointMeta(pt, nil)
	sched := &perftest.Schedule{ID: runID + "/" + pt.Name, Flows: pt.Flows}
	safe := safeName(pt.Name)
	rawDir := filepath.Join(dir, "raw", safe)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return meta, nil, err
	}
	remoteRun := path.Join(RemoteDir, "runs", runID)
	remoteSched := path.Join(remoteRun, safe+".schedule.json")

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
		before = sess.readRNICs(ctx, pt.Hosts)
	}
	// The epoch is set after the counters are read, so reading them does
	// not eat into the agents' lead.
	sched.Epoch = time.Now().Add(sess.lead).UTC()
	if err := writeJSON(filepath.Join(rawDir, "schedule.json"), sched); err != nil {
		return meta, nil, err
	}
	schedJSON, _ := json.Marshal(sched)
	total := len(pt.Flows)
	r.Progress.Stage("traffic", fmt.Sprintf("%s: %d flows on %d hosts", pt.Name, total, len(pt.Hosts)))
	r.Progress.Flows(pt.Name, 0, total)

	var mu sync.Mutex
	var recs []perftest.FlowRecord
	var results []agent.Result
	done := 0
	tctx, cancel := context.WithTimeout(ctx, r.PointTimeout)
	defer cancel()
	err := sess.ssh.ForEach(tctx, targets, func(ctx context.Context, t sshdrv.Target) error {
		if err := sess.ssh.WriteFile(ctx, t, remoteSched, schedJSON, 0o644); err != nil {
			return fmt.Errorf("host %s: upload schedule: %w", t.Name, err)
		}
		remoteOut := path.Join(remoteRun, safe+"."+t.Name+".result.json")
		cmd := strings.Join([]string{remoteAgent(), "agent", "run",
			"--schedule", shellQuote(remoteSched), "--host", shellQuote(t.Name), "--out", shellQuote(remoteOut)}, " ")
		res, err := sess.ssh.Exec(ctx, t, cmd)
		if err != nil {
			return err
		}
		// Keep the agent's own output whatever happened: it is the evidence.
		_ = os.WriteFile(filepath.Join(rawDir, t.Name+".agent.log"), append(res.Stdout, res.Stderr...), 0o644)
		if err := res.Err(); err != nil {
			return err
		}
		b, err := sess.ssh.ReadFile(ctx, t, remoteOut)
		if err != nil {
			return fmt.Errorf("host %s: fetch agent result: %w", t.Name, err)
		}
		if err := os.WriteFile(filepath.Join(rawDir, t.Name+".result.json"), b, 0o644); err != nil {
			return err
		}
		var ar agent.Result
		if err := json.Unmarshal(b, &ar); err != nil {
			return fmt.Errorf("host %s: agent result %s: %w", t.Name, remoteOut, err)
		}
		mu.Lock()
		recs = append(recs, ar.Records...)
		results = append(results, ar)
		if len(ar.Records) > 0 { // a host that only receives adds nothing to show
			done += len(ar.Records)
			r.Progress.Flows(pt.Name, done, total)
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		// Leave nothing running on the hosts, then report.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sess.ssh.ForEach(cctx, targets, func(ctx context.Context, t sshdrv.Target) error {
			return cleanupAgents(ctx, sess.ssh, t, remoteRun)
		})
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].FlowID < recs[j].FlowID })
	meta = pointMeta(pt, recs)
	meta.TelemetryIntervalNs = int64(sess.interval)
	warnings := timing(pt, meta, results)
	if rnics && err == nil {
		sess.writeRNICs(ctx, runID, before, sess.readRNICs(ctx, pt.Hosts), meta)
	}
	if werr := reports.WriteFlowsCSV(flowsCSV, runID, pt.Name, recs); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return meta, warnings, err
	}
	if missing := total - len(recs); missing > 0 {
		return meta, warnings, fmt.Errorf("%d of %d flows reported no record", missing, total)
	}
	// Telemetry is asynchronous: wait until every switch has sent a sample
	// stamped after the last flow ended, so the report sees the whole point.
	if lag := sess.col.sink.waitFor(ctx, sess.col.devices, time.Unix(0, meta.EndNs), 10*time.Second); len(lag) > 0 {
		r.Logger.Warn("telemetry lags behind traffic", "point", pt.Name, "devices", lag)
		meta.TelemetryLag = lag
	}
	return meta, warnings, nil
}

// timing computes the load a workload point's flows achieved, from when
// they really started (each agent counts from its epoch), and warns of
// hosts that started flows late.
func timing(pt *Point, meta *reports.PointMeta, results []agent.Result) []string {
	var warnings []string
	late := 0
	var lag int64
	for _, ar := range results {
		if pt.WindowNs > 0 {
			meta.AchievedLoad += perftest.AchievedLoad(ar.Records, time.Unix(0, ar.EpochNs), len(pt.Hosts), pt.LinkGbps, time.Duration(pt.WindowNs))
		}
		if ar.Late > 0 {
			late += ar.Late
			lag = max(lag, ar.MaxLagNs)
			warnings = append(warnings, fmt.Sprintf("point %s: host %s started %d of %d flows more than %v after their time (up to %v): "+
				"the schedule asks for more flows than the host can start", pt.Name, ar.Host, ar.Late, len(ar.Records),
				time.Duration(ar.LateToleranceNs), time.Duration(ar.MaxLagNs)))
		}
	}
	if late > 0 {
		meta.LateFlows, meta.MaxStartLagNs = late, lag
	}
	return warnings
}

// Point statuses in the manifest.
const (
	pointOK     = "ok"
	pointFailed = "failed"
)

func pointMeta(pt *Point, recs []perftest.FlowRecord) *reports.PointMeta {
	m := &reports.PointMeta{
		Name: pt.Name, Pattern: pt.Pattern, Lab: pt.Lab, Hosts: len(pt.Hosts),
		BufferBytes: pt.BufferBytes, LinkGbps: pt.LinkGbps, Flows: len(pt.Flows),
		RequestedLoad: pt.RequestedLoad, Params: map[string]any{},
	}
	for k, v := range pt.Params {
		m.Params[k] = v
	}
	if pt.WindowNs > 0 {
		m.OfferedLoad = pt.OfferedLoad
	}
	for i, rec := range recs {
		if i == 0 || rec.StartNs < m.StartNs {
			m.StartNs = rec.StartNs
		}
		if rec.EndNs > m.EndNs {
			m.EndNs = rec.EndNs
		}
	}
	return m
}
