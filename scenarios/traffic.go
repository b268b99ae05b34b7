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

// runPoint ships the point's schedule to every host taking part, runs the
// agents in parallel, gathers their results into raw/ and flows.csv, and
// waits for telemetry to cover the traffic.
func (r *Runner) runPoint(ctx context.Context, runID, dir string, pt *Point, flowsCSV io.Writer, col *collectorSet) (*reports.PointMeta, error) {
	sched := &perftest.Schedule{
		ID:    runID + "/" + pt.Name,
		Epoch: time.Now().Add(r.EpochLead).UTC(),
		Flows: pt.Flows,
	}
	safe := strings.ReplaceAll(pt.Name, "/", "_")
	rawDir := filepath.Join(dir, "raw", safe)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(rawDir, "schedule.json"), sched); err != nil {
		return nil, err
	}
	schedJSON, _ := json.Marshal(sched)
	remoteRun := path.Join(RemoteDir, "runs", runID)
	remoteSched := path.Join(remoteRun, safe+".schedule.json")

	var targets []sshdrv.Target
	for _, h := range pt.Hosts {
		t, err := r.target(h)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	total := len(pt.Flows)
	r.Progress.Stage("traffic", fmt.Sprintf("%s: %d flows on %d hosts", pt.Name, total, len(pt.Hosts)))
	r.Progress.Flows(pt.Name, 0, total)

	var mu sync.Mutex
	var recs []perftest.FlowRecord
	done := 0
	tctx, cancel := context.WithTimeout(ctx, r.PointTimeout)
	defer cancel()
	err := r.SSH.ForEach(tctx, targets, func(ctx context.Context, t sshdrv.Target) error {
		if err := r.SSH.WriteFile(ctx, t, remoteSched, schedJSON, 0o644); err != nil {
			return fmt.Errorf("host %s: upload schedule: %w", t.Name, err)
		}
		remoteOut := path.Join(remoteRun, safe+"."+t.Name+".result.json")
		cmd := strings.Join([]string{remoteAgent(), "agent", "run",
			"--schedule", shellQuote(remoteSched), "--host", shellQuote(t.Name), "--out", shellQuote(remoteOut)}, " ")
		res, err := r.SSH.Exec(ctx, t, cmd)
		if err != nil {
			return err
		}
		// Keep the agent's own output whatever happened: it is the evidence.
		_ = os.WriteFile(filepath.Join(rawDir, t.Name+".agent.log"), append(res.Stdout, res.Stderr...), 0o644)
		if err := res.Err(); err != nil {
			return err
		}
		b, err := r.SSH.ReadFile(ctx, t, remoteOut)
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
		done += len(ar.Records)
		r.Progress.Flows(pt.Name, done, total)
		mu.Unlock()
		return nil
	})
	if err != nil {
		// Leave nothing running on the hosts, then report.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.SSH.ForEach(cctx, targets, func(ctx context.Context, t sshdrv.Target) error {
			return cleanupAgents(ctx, r.SSH, t, remoteRun)
		})
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].FlowID < recs[j].FlowID })
	meta := pointMeta(pt, recs)
	meta.TelemetryIntervalNs = int64(r.interval)
	if werr := reports.WriteFlowsCSV(flowsCSV, runID, pt.Name, recs); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return meta, err
	}
	if missing := total - len(recs); missing > 0 {
		return meta, fmt.Errorf("%d of %d flows reported no record", missing, total)
	}
	// Telemetry is asynchronous: wait until every switch has sent a sample
	// stamped after the last flow ended, so the report sees the whole point.
	if lag := col.sink.waitFor(ctx, col.devices, time.Unix(0, meta.EndNs), 10*time.Second); len(lag) > 0 {
		r.Logger.Warn("telemetry lags behind traffic", "point", pt.Name, "devices", lag)
		meta.TelemetryLag = lag
	}
	return meta, nil
}

func pointMeta(pt *Point, recs []perftest.FlowRecord) *reports.PointMeta {
	m := &reports.PointMeta{
		Name: pt.Name, Pattern: pt.Pattern, Hosts: len(pt.Hosts),
		BufferBytes: pt.BufferBytes, LinkGbps: pt.LinkGbps, Flows: len(pt.Flows),
	}
	if pt.RequestedLoad > 0 {
		m.Params = map[string]any{"requested_load": pt.RequestedLoad, "offered_load": pt.OfferedLoad}
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
