package scenarios

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/internal/registry"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/reports"
)

// Runner executes scenarios, on a lab real or emulated: it cannot tell.
type Runner struct {
	// Lab and SSH are the lab every point runs on when Labs is nil.
	Lab *inventory.Lab
	SSH *sshdrv.Pool
	// Labs, when set, opens the lab of each variant of a matrix instead
	// (the lab: and emulation: it names), reusing an open one while
	// consecutive variants share them.
	Labs LabSource
	// OutDir is the parent of run archives (default "runs").
	OutDir string
	// Influx, when set, receives telemetry besides the archive.
	Influx *collectors.InfluxConfig
	// GNMI is how collectors reach the switches, over what the lab
	// file's gnmi_tls says (collectors.GNMISecurity.Over).
	GNMI collectors.GNMISecurity
	// AgentPath is the agent binary (cmd/labctl-agent) put on hosts that
	// lack it; hosts keep it under its SHA-256 (agent.BinaryPath).
	AgentPath string
	// EpochLead is how far in the future a point's epoch is set, to give
	// every agent time to start its servers (default 2s; 300ms emulated).
	EpochLead time.Duration
	// PointTimeout bounds one point's traffic stage (default 10m); agents
	// still running then are killed and the point fails.
	PointTimeout time.Duration
	// MaxConcurrent, when > 0, bounds the perftest clients each host agent
	// runs at once (agent.Options.MaxConcurrent): a hardware host that
	// cannot start flows as fast as the schedule asks then starts them
	// late, and the point records how many and by how much.
	MaxConcurrent int
	// Limits bound repetitions and flows (default DefaultLimits).
	Limits Limits
	// Schemes, when set, checks an emulated variant's emulation.lb and
	// lb_params before the run (the CLI passes the fabric twin's registry;
	// scenarios imports no emulator).
	Schemes tofino.SchemeCheck
	// Engines, when set, checks an emulation.engine name before the run
	// (the CLI passes the fabric twin's engine registry).
	Engines  func(name string) error
	Progress Progress
	Logger   *slog.Logger
	Version  string
	// DiskFree says how many bytes may still be written on a directory's
	// filesystem (default: statfs); an emulated lab's variant whose
	// archive would not fit is refused at plan time.
	DiskFree func(dir string) (uint64, error)
	// Part, when set, makes Run run only some points of the matrix, into
	// a directory of the run's (executor.go).
	Part *Part
}

// Run outcomes, as manifest.json and Outcome say them.
const (
	OutcomeOK = "ok"
	// OutcomePartial: some points failed (each recorded with its error in
	// the manifest), the others ran; the report covers them.
	OutcomePartial = "partial"
	// OutcomeFailed: no point ran to the end, or a run-wide stage failed;
	// the manifest's stage says where it stopped.
	OutcomeFailed = "failed"
	// OutcomeDegraded (health.go): every point ran, telemetry is incomplete.
)

// ErrPartial is wrapped by Run's error when some points failed and the
// others ran: the archive and report are complete for those.
var ErrPartial = errors.New("partial run")

// Outcome is where a run's results are.
type Outcome struct {
	RunID   string `json:"run_id"`
	Dir     string `json:"run_dir"`
	Report  string `json:"report,omitempty"`
	Outcome string `json:"outcome"`
	// Failed names the points that failed.
	Failed  []string         `json:"failed_points,omitempty"`
	Summary *reports.Summary `json:"-"`
	// Warnings are problems that did not stop the run, e.g. telemetry that
	// could not be written to InfluxDB (it is in the archive), or hosts
	// that started flows late.
	Warnings []string `json:"warnings,omitempty"`
}

// runState is one Run's bookkeeping.
type runState struct {
	r        *Runner
	s        *Scenario
	runID    string
	dir      string
	m        *reports.Manifest
	plan     *Plan
	out      *Outcome
	flowsCSV *os.File
	fixedKey string // the lab key Runner.Lab serves (without Labs)
	offsets  []int  // index of each variant's first point in the plan
	failures []failure
	// staleWatermarks: points whose switch queue watermarks could not be
	// cleared, so their peaks may be an earlier point's (degraded).
	staleWatermarks int
	// progress
	total, done int
	started     time.Time
}

type failure struct {
	stage, point string
	err          error
}

// Run executes every point of every variant of s, in order, into one
// archive. A point that fails (traffic, timeout, its variant's lab,
// planning or provisioning) is recorded as failed and the run goes on; the
// run is then "partial" and Run's error wraps ErrPartial. A run that ends
// early (interrupted, or no point succeeded) still leaves an archive whose
// manifest says where it stopped.
func (r *Runner) Run(ctx context.Context, s *Scenario) (*Outcome, error) {
	r.defaults()
	variants, err := s.Variants()
	if err != nil {
		return nil, err
	}
	if err := Preflight(s, variants, r.labInventory, r.Limits, r.Schemes, r.Engines); err != nil {
		return nil, err
	}
	runID := newRunID(s.Name)
	dir := filepath.Join(r.OutDir, runID)
	if r.Part != nil {
		runID, dir = r.Part.RunID, r.Part.Dir
	}
	if _, err := archive.Create(dir); err != nil {
		return nil, err
	}
	st := &runState{r: r, s: s, runID: runID, dir: dir, out: &Outcome{RunID: runID, Dir: dir},
		plan: &Plan{Scenario: s.Name}, started: time.Now(),
		m: &reports.Manifest{RunID: runID, Scenario: s.Name, ScenarioFile: s.File,
			Version: r.Version, Started: time.Now().UTC(), Outcome: "running", Stage: StagePlan}}
	st.m.Host, st.m.PID, st.m.PIDStart = lease.Self() // labctl runs tells a crashed run by them
	// This run's runner: its stages go to the manifest too.
	rc := *r
	rc.Progress = stageLog{r.Progress, st.m}
	st.r = &rc
	for _, v := range variants {
		st.offsets = append(st.offsets, st.total)
		st.total += max(s.Repetitions, 1) * len(v.Entries)
	}
	st.total = r.Part.count(st.total)
	st.save()
	defer func() {
		if st.flowsCSV != nil {
			st.flowsCSV.Close()
		}
	}()

	var sess *session
	for vi, v := range variants {
		if ctx.Err() != nil {
			break
		}
		if !st.selects(vi, len(variantPoints(v, vi, ""))) {
			continue
		}
		sess = st.runVariant(ctx, sess, v, vi)
	}
	if ctx.Err() == nil { // an interrupted run keeps the stage it was stopped at
		st.reach(StageGather)
	}
	st.r.Progress.Stage(StageGather, "stopping collectors")
	released := st.releaseSession(ctx, sess) // the analysis overlaps the lab's release
	lab := ""
	if sess != nil {
		lab = sess.lab.Name
	}
	return st.finish(ctx, func() { st.awaitRelease(released, lab) })
}

// runVariant runs one variant's points on its lab and returns the session
// it used (nil when its lab could not be opened).
func (st *runState) runVariant(ctx context.Context, cur *session, v Variant, vi int) *session {
	r, s := st.r, v.Scenario
	stage := func(name string) string {
		if v.Label == "" {
			return name
		}
		return name + ":" + v.Label
	}
	sess, err := st.session(ctx, cur, s, vi == 0)
	if err != nil {
		st.failVariant(v, vi, cmp.Or(s.Lab, DefaultLab), stage(StageLab), err)
		return nil
	}
	if st.m.Lab == nil {
		st.m.Lab = labSnapshot(sess.lab)
		st.plan.Lab = sess.lab.Name
	}
	if _, ok := st.m.Labs[sess.lab.Name]; !ok {
		if st.m.Labs == nil {
			st.m.Labs = map[string]*inventory.Lab{}
		}
		st.m.Labs[sess.lab.Name] = labSnapshot(sess.lab)
	}
	st.m.Stage = stage(StagePlan)
	st.save()
	r.Progress.Stage(StagePlan, fmt.Sprintf("%s on %s", cmp.Or(v.Label, s.Name), sess.lab.Name))
	pts, err := planVariant(v, vi, sess.lab)
	pts = st.pick(pts, vi)
	if err == nil && sess.lab.Emulated {
		err = st.checkDisk(pts, sess)
	}
	if err == nil {
		for _, pt := range pts {
			pt.Flows = nil // the run keeps only the points to come with theirs
			st.plan.Points = append(st.plan.Points, pt)
		}
		err = archive.WriteJSON(archive.Open(st.dir).Plan(), st.plan)
	}
	if err != nil {
		st.failVariant(v, vi, sess.lab.Name, stage(StagePlan), err)
		return sess
	}
	if err := st.provision(ctx, sess, v); err != nil {
		for i := range pts {
			st.failPoint(&pts[i], stage(StageProvision), err)
		}
		return sess
	}
	for i := range pts {
		if ctx.Err() != nil {
			break
		}
		st.point(ctx, sess, &pts[i])
		pts[i].Flows = nil
	}
	return sess
}

// provision makes the lab match the variant's image and profiles, unless
// the session already did for the same ones (the same files, and the same
// content of the profiles the matrix derives). A variant without any
// keeps whatever the lab has.
func (st *runState) provision(ctx context.Context, sess *session, v Variant) error {
	p := v.Scenario.Provision
	derived := forLab(v.Profiles, sess.lab.Emulated)
	if !p.Any() && len(derived) == 0 {
		return nil
	}
	for _, f := range []*string{&p.Image, &p.SwitchProfile, &p.RNICProfile} {
		*f = v.Scenario.resolve(*f)
	}
	b, _ := json.Marshal(struct {
		Provision
		Derived []DerivedProfile
	}{p, derived})
	if sess.provKey == string(b) {
		return nil
	}
	sess.provKey = "" // unknown until it succeeds
	st.m.Stage = StageProvision
	rec := archive.Open(st.dir).Provision(v.Label)
	if v.Label != "" {
		st.m.Stage += ":" + v.Label
	}
	st.save()
	// A derived profile is applied from its copy in the archive, which
	// thus says exactly what the lab was given.
	for _, d := range derived {
		kind, _ := profileKindOf(d.Field)
		f := rec.DerivedProfile(kind.archive)
		err := os.MkdirAll(rec.Path(), 0o755)
		if err == nil {
			err = archive.WriteBytes(f, d.YAML)
		}
		if err != nil {
			return fmt.Errorf("derived profile of %s: %w", d.Base, err)
		}
		*kind.ref(&p) = f
	}
	st.r.Progress.Stage(StageProvision, "switch image and profiles")
	if err := st.r.provisionLab(ctx, sess, p, rec); err != nil {
		return err // no traffic on a lab that is not as intended
	}
	sess.provKey = string(b)
	return nil
}

// point runs one point and records it, whatever happens.
func (st *runState) point(ctx context.Context, sess *session, pt *Point) {
	r := st.r
	r.Progress.Point(st.progress(pt.Name, false))
	fail := func(stage string, err error) { st.failPoint(pt, stage, err) }
	if sess.col == nil {
		st.reach(StageCollect)
		r.Progress.Stage(StageCollect, fmt.Sprintf("%d switches", len(sess.lab.Switches)))
		col, err := r.startCollectors(ctx, st.s, st.runID, st.dir, sess)
		if err != nil {
			fail(StageCollect, err)
			return
		}
		sess.col = col
		st.noteInflux()
	}
	st.reach(StageAgent + ":" + pt.Name)
	sum, err := st.shipAgents(ctx, sess, pt.Hosts)
	if err != nil {
		fail(StageAgent+":"+pt.Name, err)
		return
	}
	if st.flowsCSV == nil {
		// the header is written then renamed into place, the rows appended
		// whole (reports.WriteFlowsCSV): a crash leaves a file with a header
		path := archive.Open(st.dir).Flows()
		err := archive.WriteFile(path, reports.WriteFlowsHeader)
		var f *os.File
		if err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		}
		if err != nil {
			fail(StageTraffic+":"+pt.Name, err)
			return
		}
		st.flowsCSV = f
	}
	st.reach(StageTraffic + ":" + pt.Name)
	if warn := sess.clearWatermarks(ctx, pt.Name); len(warn) > 0 {
		st.out.Warnings = append(st.out.Warnings, warn...)
		st.staleWatermarks++
	}
	meta, warn, err := r.runPoint(ctx, st.runID, st.dir, sess, sum, pt, st.flowsCSV)
	st.out.Warnings = append(st.out.Warnings, warn...)
	if err != nil {
		st.failures = append(st.failures, failure{StageTraffic + ":" + pt.Name, pt.Name, err})
		meta.Status, meta.Error = pointFailed, err.Error()
		r.Logger.Info("point failed", "point", pt.Name, "err", err)
	}
	st.record(*meta)
}

// failVariant records every point of a variant that could not be planned
// (on lab, by name: the variant's lab, or what it asked for when that
// could not be opened).
func (st *runState) failVariant(v Variant, vi int, lab, stage string, err error) {
	for _, pt := range st.pick(variantPoints(v, vi, lab), vi) {
		st.failPoint(&pt, stage, err)
	}
}

func (st *runState) failPoint(pt *Point, stage string, err error) {
	st.r.Logger.Info("point failed", "point", pt.Name, "stage", stage, "err", err)
	st.failures = append(st.failures, failure{stage, pt.Name, err})
	m := pointMeta(pt)
	m.Status, m.Error = pointFailed, fmt.Sprintf("%s: %v", stage, err)
	st.record(*m)
}

func (st *runState) record(m reports.PointMeta) {
	if m.Status == "" {
		m.Status = pointOK
	}
	st.m.Points = append(st.m.Points, m)
	st.save()
	st.done++
	pp := st.progress(m.Name, true)
	pp.Error = m.Error
	st.r.Progress.Point(pp)
}

// progress says where the run is; the ETA is the mean time of the points
// done so far times the points left.
func (st *runState) progress(point string, finished bool) PointProgress {
	p := PointProgress{Point: point, Index: st.done + 1, Total: st.total, Done: st.done, Failed: len(st.failures),
		Finished: finished, Elapsed: time.Since(st.started)}
	if finished {
		p.Index = st.done
	}
	if st.done > 0 {
		p.ETA = p.Elapsed / time.Duration(st.done) * time.Duration(st.total-st.done)
	}
	return p
}

// finish analyses what ran and sets the run's outcome. released waits for
// the run's last lab to be released: the analysis goes on meanwhile, and
// the run ends, whatever its outcome, only once it has.
func (st *runState) finish(ctx context.Context, released func()) (*Outcome, error) {
	m, out := st.m, st.out
	m.Ended = time.Now().UTC()
	if m.Telemetry != nil {
		out.Warnings = append(out.Warnings, m.Telemetry.Errors...)
		out.Warnings = append(out.Warnings, telemetryWarnings(m.Telemetry)...)
	}
	for _, p := range m.Points {
		if len(p.TelemetryLag) > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("point %s: telemetry from %v did not reach the end of the traffic", p.Name, p.TelemetryLag))
		}
	}
	m.Warnings = out.Warnings
	for _, f := range st.failures {
		out.Failed = append(out.Failed, f.point)
	}
	stop := func(stage string, err error) (*Outcome, error) {
		released()
		m.Stage, m.Outcome, m.Error, out.Outcome = stage, OutcomeFailed, err.Error(), OutcomeFailed
		st.save()
		return out, fmt.Errorf("run %s: %s: %w", st.runID, stage, err)
	}
	if err := ctx.Err(); err != nil {
		return stop(m.Stage, fmt.Errorf("interrupted: %w", err))
	}
	if len(st.failures) == len(m.Points) && len(st.failures) > 0 {
		f := st.failures[0]
		err := f.err
		if n := len(st.failures); n > 1 {
			err = fmt.Errorf("%w (and the %d other points failed too)", err, n-1)
		}
		return stop(f.stage, err)
	}
	if st.r.Part != nil { // the run's gather analyses
		released()
		m.Stage, m.Outcome, out.Outcome = StageDone, OutcomeOK, OutcomeOK
		st.save()
		return out, nil
	}
	st.reach(StageAnalyse) // before it is said: a run killed once it was said was there
	st.r.Progress.Stage(StageAnalyse, "")
	outcome := OutcomeOK
	switch {
	case len(st.failures) > 0:
		outcome = OutcomePartial
	case m.Telemetry.Incomplete(), st.staleWatermarks > 0:
		outcome = OutcomeDegraded
	}
	// The reports say the outcome the run ends with; the manifest says
	// it once they are written.
	sum, err := reports.WriteRunReportsAs(st.dir, func(fm *reports.Manifest) { fm.Outcome, fm.Stage = outcome, StageDone })
	released()
	if err != nil {
		return stop(StageAnalyse, err)
	}
	out.Summary, out.Report = sum, archive.Open(st.dir).ReportHTML()
	m.Stage, m.Outcome, out.Outcome = StageDone, outcome, outcome
	m.Stages = append(m.Stages, reports.StageTime{Stage: m.Stage, At: time.Now().UTC()}) // where the report's time ends
	if len(st.failures) > 0 {
		m.Error = fmt.Sprintf("%d of %d points failed: %s", len(st.failures), len(m.Points), strings.Join(out.Failed, ", "))
		st.save()
		return out, fmt.Errorf("run %s: %w: %s", st.runID, ErrPartial, m.Error)
	}
	st.save()
	return out, nil
}

// reach records in the manifest the stage the run has reached, so that a
// run killed there is listed (labctl runs) as crashed at that stage.
func (st *runState) reach(stage string) {
	st.m.Stage = stage
	st.save()
}

func (st *runState) save() {
	if err := archive.WriteManifest(archive.Open(st.dir), st.m); err != nil {
		st.r.Logger.Error("write manifest", "err", err)
	}
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
	def := DefaultLimits()
	r.Limits.Repetitions = cmp.Or(r.Limits.Repetitions, def.Repetitions)
	r.Limits.FlowsPerPoint = cmp.Or(r.Limits.FlowsPerPoint, def.FlowsPerPoint)
	if r.DiskFree == nil {
		r.DiskFree = diskFree
	}
}

// labInventory is what a variant's lab holds, without starting it: the
// runner's own lab, what the LabSource can tell, or the topology a
// generator spec builds; nil and no error when none of them knows (a
// LabSource that cannot tell is left to open the lab when the run does).
func (r *Runner) labInventory(spec string) (*inventory.Lab, error) {
	switch {
	case r.Labs == nil && r.Lab != nil:
		return r.Lab, nil
	case r.Labs != nil:
		if li, ok := r.Labs.(LabInventory); ok {
			return li.Inventory(spec)
		}
	}
	if inventory.IsGeneratorSpec(spec) {
		return inventory.Generate(spec)
	}
	return nil, nil
}

func safeName(s string) string { return archive.SafeName(s) }

func newRunID(scenario string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%s-%s", scenario, time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b))
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
	// gaps and influx keep the books of what telemetry is missing.
	gaps      *collectors.GapRecorder
	influx    *collectors.InfluxSink
	influxCfg *collectors.InfluxConfig
	dir       string
}

// newSink builds the telemetry sink kind from the registry.
func newSink(r *registry.Registry[collectors.SinkKind], kind string, o collectors.SinkOptions) (collectors.Sink, error) {
	k, err := r.Get(kind)
	if err != nil {
		return nil, err
	}
	return k.New(o)
}

func (r *Runner) startCollectors(ctx context.Context, s *Scenario, runID, dir string, sess *session) (*collectorSet, error) {
	lab := sess.lab
	secs := map[string]collectors.GNMISecurity{} // per switch: the lab's gnmi_tls, the switch's over it, the flags over both
	for i := range lab.Switches {
		sec, err := collectors.SwitchSecurity(lab, &lab.Switches[i])
		if err != nil {
			return nil, err
		}
		secs[lab.Switches[i].Name] = sec.Over(r.GNMI)
	}
	sinks := collectors.Sinks()
	asink, err := newSink(sinks, collectors.SinkArchive, collectors.SinkOptions{Dir: archive.Open(dir).Telemetry()})
	if err != nil {
		return nil, err
	}
	sink := asink
	var infl *collectors.InfluxSink
	var influxCfg *collectors.InfluxConfig
	if r.Influx != nil {
		cfg := *r.Influx
		if cfg.SpoolDir == "" { // never under telemetry/, which the report reads
			cfg.SpoolDir = archive.Open(dir).Spool()
		}
		cfg.Logger = cmp.Or(cfg.Logger, r.Logger)
		is, err := newSink(sinks, collectors.SinkInflux, collectors.SinkOptions{Influx: &cfg})
		if err != nil {
			return nil, fmt.Errorf("influxdb %s: %w", cfg.URL, err)
		}
		inf := is.(*collectors.InfluxSink) // its stats go into the manifest
		infl, influxCfg = inf, &cfg
		sink = collectors.Multi(asink, quietClose{inf})
	}
	cctx, cancel := context.WithCancel(ctx)
	gaps := collectors.NewGapRecorder(sink)
	cs := &collectorSet{cancel: cancel, sink: newWatermarkSink(gaps), gaps: gaps, influx: infl, influxCfg: influxCfg, dir: dir}
	if s.Telemetry.Disabled {
		return cs, nil
	}
	paths := s.Telemetry.Paths
	if len(paths) == 0 && lab.Emulated { // the twin's scheme counters too (collectors/lbschema.go)
		paths = append(append([]string{}, collectors.DefaultPaths...), collectors.LBPaths...)
	}
	opt := collectors.GNMIOptions{
		Interval: sess.interval, Paths: paths,
		Lab: lab.Name, Run: runID, Logger: r.Logger,
	}
	for _, sw := range lab.Switches {
		if sw.Mgmt.GNMI == "" {
			continue
		}
		cs.devices = append(cs.devices, sw.Name)
		t := collectors.GNMITarget{Device: sw.Name, Addr: sw.Mgmt.GNMI}
		opt := opt
		opt.Security = secs[sw.Name]
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			if err := collectors.Collect(cctx, t, opt, cs.sink); err != nil && !errors.Is(err, context.Canceled) {
				cs.addError(fmt.Errorf("switch %s: %w", t.Device, err))
			}
		}()
	}
	return cs, nil
}

// addError records a collection problem once, however often it recurs.
func (cs *collectorSet) addError(err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, e := range cs.errs {
		if e.Error() == err.Error() {
			return
		}
	}
	cs.errs = append(cs.errs, err)
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
	telemetryHealth(meta, cs.gaps.Gaps(), cs.influx, cs.influxCfg, cs.dir)
	cs.stopped = meta
	return meta
}
