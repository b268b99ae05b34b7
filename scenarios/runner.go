package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/labctl/labctl/collectors"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

// Runner executes scenarios on one lab, real or emulated: it cannot tell.
type Runner struct {
	Lab *inventory.Lab
	SSH *sshdrv.Pool
	// OutDir is the parent of run archives (default "runs").
	OutDir string
	// Influx, when set, receives telemetry besides the archive.
	Influx *collectors.InfluxConfig
	// AgentPath is the local labctl binary shipped to hosts as the agent.
	AgentPath string
	// EpochLead is how far in the future a point's epoch is set, to give
	// every agent time to start its servers (default 2s; 300ms emulated).
	EpochLead time.Duration
	// PointTimeout bounds one point's traffic stage (default 10m); agents
	// still running then are killed and the point fails.
	PointTimeout time.Duration
	Progress     Progress
	Logger       *slog.Logger
	Version      string

	interval time.Duration // telemetry sample interval of the current run
}

// Outcome is where a run's results are.
type Outcome struct {
	RunID   string           `json:"run_id"`
	Dir     string           `json:"run_dir"`
	Report  string           `json:"report"`
	Summary *reports.Summary `json:"-"`
	// Warnings are problems that did not stop the run, e.g. telemetry that
	// could not be written to InfluxDB (it is in the archive).
	Warnings []string `json:"warnings,omitempty"`
}

// Run executes every point of s and writes the archive. A run that fails
// part-way still leaves an archive whose manifest says where it stopped.
func (r *Runner) Run(ctx context.Context, s *Scenario) (*Outcome, error) {
	r.defaults()
	r.interval = s.Interval(r.Lab.Emulated)
	runID := newRunID(s.Name)
	dir := filepath.Join(r.OutDir, runID)
	for _, d := range []string{"raw", "telemetry"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("run archive: %w", err)
		}
	}
	out := &Outcome{RunID: runID, Dir: dir}
	m := &reports.Manifest{
		RunID: runID, Scenario: s.Name, ScenarioFile: s.File, Lab: labSnapshot(r.Lab),
		Version: r.Version, Started: time.Now().UTC(), Outcome: "running", Stage: "plan",
	}
	save := func() {
		if err := writeJSON(filepath.Join(dir, "manifest.json"), m); err != nil {
			r.Logger.Error("write manifest", "err", err)
		}
	}
	fail := func(stage string, err error) (*Outcome, error) {
		m.Stage, m.Outcome, m.Error, m.Ended = stage, "failed", err.Error(), time.Now().UTC()
		save()
		return out, fmt.Errorf("run %s: %s: %w", runID, stage, err)
	}
	save()

	r.Progress.Stage("plan", fmt.Sprintf("%s on %s", s.Name, r.Lab.Name))
	plan, err := MakePlan(s, r.Lab)
	if err != nil {
		return fail("plan", err)
	}
	if err := writeJSON(filepath.Join(dir, "plan.json"), plan); err != nil {
		return fail("plan", err)
	}

	if s.Provision.Any() {
		m.Stage = "provision"
		save()
		r.Progress.Stage("provision", "switch image and profiles")
		if err := r.provisionLab(ctx, s, dir); err != nil {
			return fail("provision", err) // no traffic on a lab that is not as intended
		}
	}

	r.Progress.Stage("collect", fmt.Sprintf("%d switches", len(r.Lab.Switches)))
	col, err := r.startCollectors(ctx, s, runID, dir)
	if err != nil {
		return fail("collect", err)
	}
	defer col.stop(context.Background())

	r.Progress.Stage("traffic", "shipping agent")
	if err := r.shipAgents(ctx, plan); err != nil {
		return fail("traffic", err)
	}
	flowsCSV, err := os.Create(filepath.Join(dir, "flows.csv"))
	if err != nil {
		return fail("traffic", err)
	}
	defer flowsCSV.Close()
	if err := reports.WriteFlowsHeader(flowsCSV); err != nil {
		return fail("traffic", err)
	}
	for i := range plan.Points {
		pt := &plan.Points[i]
		m.Stage = "traffic:" + pt.Name
		save()
		meta, err := r.runPoint(ctx, runID, dir, pt, flowsCSV, col)
		if meta != nil {
			m.Points = append(m.Points, *meta)
		}
		if err != nil {
			return fail("traffic:"+pt.Name, err)
		}
	}

	r.Progress.Stage("gather", "stopping collectors")
	m.Telemetry = col.stop(ctx)
	out.Warnings = append(out.Warnings, m.Telemetry.Errors...)
	for _, p := range m.Points {
		if len(p.TelemetryLag) > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("point %s: telemetry from %v did not reach the end of the traffic", p.Name, p.TelemetryLag))
		}
	}
	save()

	r.Progress.Stage("analyse", "")
	sum, err := reports.WriteRunReports(dir)
	if err != nil {
		return fail("analyse", err)
	}
	m.Stage, m.Outcome, m.Ended = "done", "ok", time.Now().UTC()
	save()
	out.Summary, out.Report = sum, filepath.Join(dir, "report.html")
	return out, nil
}

func (r *Runner) defaults() {
	if r.OutDir == "" {
		r.OutDir = "runs"
	}
	if r.Progress == nil {
		r.Progress = noProgress{}
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if r.PointTimeout == 0 {
		r.PointTimeout = 10 * time.Minute
	}
	if r.EpochLead == 0 {
		r.EpochLead = 2 * time.Second
		if r.Lab.Emulated {
			r.EpochLead = 300 * time.Millisecond
		}
	}
}

func (r *Runner) target(name string) (sshdrv.Target, error) {
	addr := ""
	if h, ok := r.Lab.Host(name); ok {
		addr = h.Mgmt.SSH
	} else if sw, ok := r.Lab.Switch(name); ok {
		addr = sw.Mgmt.SSH
	}
	if addr == "" {
		return sshdrv.Target{}, fmt.Errorf("device %s has no ssh management address in lab %s", name, r.Lab.Name)
	}
	cred, ok := r.Lab.CredentialFor(name)
	if !ok {
		return sshdrv.Target{}, fmt.Errorf("device %s has no credential in lab %s", name, r.Lab.Name)
	}
	return sshdrv.Target{Name: name, Addr: addr, Cred: cred}, nil
}

func (r *Runner) shipAgents(ctx context.Context, plan *Plan) error {
	if r.AgentPath == "" {
		p, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the labctl binary to ship as agent: %w", err)
		}
		r.AgentPath = p
	}
	sum, err := fileSHA256(r.AgentPath)
	if err != nil {
		return fmt.Errorf("agent binary: %w", err)
	}
	seen := map[string]bool{}
	var targets []sshdrv.Target
	for _, p := range plan.Points {
		for _, h := range p.Hosts {
			if !seen[h] {
				seen[h] = true
				t, err := r.target(h)
				if err != nil {
					return err
				}
				targets = append(targets, t)
			}
		}
	}
	return r.SSH.ForEach(ctx, targets, func(ctx context.Context, t sshdrv.Target) error {
		return shipAgent(ctx, r.SSH, t, r.AgentPath, sum)
	})
}

func newRunID(scenario string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%s-%s", scenario, time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b))
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// labSnapshot is the lab as recorded in the manifest. Labs hold credential
// references only, never secrets, so the snapshot can be stored as is.
func labSnapshot(l *inventory.Lab) *inventory.Lab { c := *l; return &c }

// collectorSet runs one gNMI collector per switch into shared sinks.
type collectorSet struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	sink    *watermarkSink
	devices []string
	mu      sync.Mutex
	errs    []error
	stopped *reports.TelemetryMeta
}

func (r *Runner) startCollectors(ctx context.Context, s *Scenario, runID, dir string) (*collectorSet, error) {
	archive, err := collectors.NewArchiveSink(filepath.Join(dir, "telemetry"))
	if err != nil {
		return nil, err
	}
	var sink collectors.Sink = archive
	if r.Influx != nil {
		cfg := *r.Influx
		if cfg.SpoolPath == "" {
			cfg.SpoolPath = filepath.Join(dir, "telemetry", "influx-unwritten.lp")
		}
		inf, err := collectors.NewInfluxSink(cfg)
		if err != nil {
			return nil, fmt.Errorf("influxdb %s: %w", cfg.URL, err)
		}
		sink = collectors.Multi(archive, inf)
	}
	cctx, cancel := context.WithCancel(ctx)
	cs := &collectorSet{cancel: cancel, sink: newWatermarkSink(sink)}
	if s.Telemetry.Disabled {
		return cs, nil
	}
	opt := collectors.GNMIOptions{
		Interval: s.Interval(r.Lab.Emulated), Paths: s.Telemetry.Paths,
		Lab: r.Lab.Name, Run: runID, Logger: r.Logger,
	}
	for _, sw := range r.Lab.Switches {
		if sw.Mgmt.GNMI == "" {
			continue
		}
		cs.devices = append(cs.devices, sw.Name)
		t := collectors.GNMITarget{Device: sw.Name, Addr: sw.Mgmt.GNMI}
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			if err := collectors.Collect(cctx, t, opt, cs.sink); err != nil && !errors.Is(err, context.Canceled) {
				cs.mu.Lock()
				cs.errs = append(cs.errs, fmt.Errorf("switch %s: %w", t.Device, err))
				cs.mu.Unlock()
			}
		}()
	}
	return cs, nil
}

// stop ends collection once and reports what was collected.
func (cs *collectorSet) stop(ctx context.Context) *reports.TelemetryMeta {
	if cs.stopped != nil {
		return cs.stopped
	}
	cs.cancel()
	cs.wg.Wait()
	meta := &reports.TelemetryMeta{Devices: cs.devices, Points: cs.sink.points()}
	if err := cs.sink.Close(ctx); err != nil {
		meta.Errors = append(meta.Errors, err.Error())
	}
	for _, e := range cs.errs {
		meta.Errors = append(meta.Errors, e.Error())
	}
	cs.stopped = meta
	return meta
}
