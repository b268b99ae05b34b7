package scenarios

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/reports"
)

// PointExecutor runs points of a planned run somewhere other than this
// process (a Slurm cluster): point i (an index into plan.json's points)
// runs with Runner.RunPoint into the run's part i (archive.Dir.Part),
// which appears whole or not at all. Execute returns when none of the points is running any
// more; points left without a result are recorded as failed. When ctx
// ends it stops them (the run is then interrupted and can be resumed).
type PointExecutor interface {
	Name() string
	Execute(ctx context.Context, dir string, indexes []int) error
}

// Part selects the points a Run runs, and where: the points Only (indexes
// into the run's plan) into Dir, under the run's ID.
type Part struct {
	RunID string
	Dir   string
	Only  []int
}

// count is how many of a run's total points the part runs.
func (p *Part) count(total int) int {
	if p == nil {
		return total
	}
	return len(p.Only)
}

// selects says whether the part runs any of variant vi's n points.
func (st *runState) selects(vi, n int) bool {
	p := st.r.Part
	if p == nil {
		return true
	}
	for _, i := range p.Only {
		if i >= st.offsets[vi] && i < st.offsets[vi]+n {
			return true
		}
	}
	return false
}

// pick keeps the points of variant vi the part runs.
func (st *runState) pick(pts []Point, vi int) []Point {
	if st.r.Part == nil {
		return pts
	}
	var out []Point
	for k, pt := range pts {
		if slices.Contains(st.r.Part.Only, st.offsets[vi]+k) {
			out = append(out, pt)
		}
	}
	return out
}

// Placement says where a point ran; the manifest records it.
type Placement struct{ Executor, JobID, Node string }

// RunPoint runs point i of s (as the run in dir planned it) into the
// run's part i (archive.Dir.Part): into a directory of its own first,
// renamed into place when the point is recorded, so a point killed half-way leaves no result
// and one that ran twice keeps the first. A point that failed is a result
// (as in a local run); an interrupted one is not.
func (r *Runner) RunPoint(ctx context.Context, s *Scenario, dir string, i int, at Placement) error {
	ad := archive.Open(dir)
	final := ad.Part(i)
	if final.HasManifest() {
		return nil // done already (a retried task whose first try finished)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	tmp := ad.PartTemp(i, hex.EncodeToString(b))
	defer os.RemoveAll(tmp.Path())
	rr := *r
	rr.Part = &Part{RunID: ad.ID(), Dir: tmp.Path(), Only: []int{i}}
	_, err := rr.Run(ctx, s)
	if ctx.Err() != nil {
		return fmt.Errorf("point %d: interrupted: %w", i, ctx.Err())
	}
	var m reports.Manifest
	if rerr := archive.ReadManifest(tmp, &m); rerr != nil {
		return errors.Join(err, rerr)
	}
	if len(m.Points) != 1 {
		return fmt.Errorf("point %d: the run recorded %d points: %w", i, len(m.Points), err)
	}
	m.Points[0].Executor, m.Points[0].JobID, m.Points[0].Node = at.Executor, at.JobID, at.Node
	if err := archive.WriteManifest(tmp, &m); err != nil {
		return err
	}
	if err := os.Rename(tmp.Path(), final.Path()); err != nil && !errors.Is(err, os.ErrExist) {
		if final.HasManifest() {
			return nil // another try of the point got there first
		}
		return fmt.Errorf("point %d: %w", i, err)
	}
	return nil
}

// PlanPoints plans s's whole matrix on the labs its variants name, read
// without starting them (Runner.Labs must be able to tell, or the lab be
// a generated topology): the points, and which run on an emulated lab.
func (r *Runner) PlanPoints(s *Scenario) (*Plan, []bool, error) {
	r.defaults()
	variants, err := s.Variants()
	if err != nil {
		return nil, nil, err
	}
	if err := Preflight(s, variants, r.labInventory, r.Limits, r.Schemes, r.Engines); err != nil {
		return nil, nil, err
	}
	p := &Plan{Scenario: s.Name}
	var emulated []bool
	for vi, v := range variants {
		spec := cmp.Or(v.Scenario.Lab, DefaultLab)
		lab, err := r.labInventory(spec)
		if err == nil && lab == nil {
			err = errors.New("cannot be read without opening it")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("lab %s: %w", spec, err)
		}
		pts, err := planVariant(v, vi, lab)
		if err != nil {
			// The variant fails when it runs, as it would locally.
			pts = variantPoints(v, vi, lab.Name)
		}
		if p.Lab == "" {
			p.Lab = lab.Name
		}
		// A lab already up here (labctl lab up) is one lab: its points
		// cannot each start their own elsewhere.
		up := false
		if ru, ok := r.Labs.(interface{ Running(spec string) bool }); ok {
			up = ru.Running(spec)
		}
		for _, pt := range pts {
			pt.Flows = nil
			p.Points = append(p.Points, pt)
			emulated = append(emulated, lab.Emulated && !up)
		}
	}
	return p, emulated, nil
}

// RunOn runs s like Run, but its emulated points on exec; points on a
// hardware lab run here, one after another (one lab cannot serve several
// points at once). job, when not nil, is written to the run's
// executor.json (what a later --resume needs to rebuild the command).
func (r *Runner) RunOn(ctx context.Context, s *Scenario, exec PointExecutor, job any) (*Outcome, error) {
	plan, emulated, err := r.PlanPoints(s)
	if err != nil {
		return nil, err
	}
	runID := newRunID(s.Name)
	dir := filepath.Join(r.OutDir, runID)
	ad := archive.Open(dir)
	if err := os.MkdirAll(ad.Points(), 0o755); err != nil {
		return nil, fmt.Errorf("run archive: %w", err)
	}
	if err := archive.WriteJSON(ad.Plan(), plan); err != nil {
		return nil, err
	}
	if job != nil {
		if err := archive.WriteJSON(ad.ExecutorJob(), job); err != nil {
			return nil, err
		}
	}
	m := &reports.Manifest{RunID: runID, Scenario: s.Name, ScenarioFile: s.File, Version: r.Version,
		Started: time.Now().UTC(), Outcome: "running", Stage: StageTraffic, Executor: exec.Name()}
	return r.execute(ctx, s, exec, dir, m, plan, emulated)
}

// Resume finishes the run in dir: the points without a result run (on
// exec, or here for a hardware lab's), then the run is gathered again.
// s must plan the same points the run did.
func (r *Runner) Resume(ctx context.Context, s *Scenario, exec PointExecutor, dir string) (*Outcome, error) {
	plan, emulated, err := r.PlanPoints(s)
	if err != nil {
		return nil, err
	}
	ad := archive.Open(dir)
	var old Plan
	if err := archive.ReadJSON(ad.Plan(), &old); err != nil {
		return nil, err
	}
	if len(old.Points) != len(plan.Points) {
		return nil, fmt.Errorf("run %s planned %d points, scenario %s plans %d: not the same run", dir, len(old.Points), s.Name, len(plan.Points))
	}
	for i := range old.Points {
		if old.Points[i].Name != plan.Points[i].Name {
			return nil, fmt.Errorf("run %s: point %d is %s, but scenario %s plans %s there: not the same run", dir, i, old.Points[i].Name, s.Name, plan.Points[i].Name)
		}
	}
	var m reports.Manifest
	var fe *archive.FormatError
	if err := archive.ReadManifest(ad, &m); errors.As(err, &fe) {
		return nil, err // a newer labctl's run: rewriting its manifest would lose what this one does not know
	} else if err != nil {
		m = reports.Manifest{RunID: ad.ID(), Scenario: s.Name, ScenarioFile: s.File, Version: r.Version,
			Started: time.Now().UTC()}
	}
	m.Outcome, m.Stage, m.Error, m.Executor = "running", StageTraffic, "", exec.Name()
	return r.execute(ctx, s, exec, filepath.Clean(dir), &m, &old, emulated)
}

// execute runs the points of plan that have no result yet and gathers.
func (r *Runner) execute(ctx context.Context, s *Scenario, exec PointExecutor, dir string, m *reports.Manifest, plan *Plan, emulated []bool) (*Outcome, error) {
	st := &runState{r: r, s: s, runID: m.RunID, dir: dir, m: m, plan: plan, total: len(plan.Points),
		out: &Outcome{RunID: m.RunID, Dir: dir}, started: time.Now()}
	m.Host, m.PID, m.PIDStart = lease.Self()
	m.Points = nil
	st.save()
	var remote, local []int
	for i := range plan.Points {
		if archive.Open(dir).Part(i).HasManifest() {
			continue
		}
		if emulated[i] {
			remote = append(remote, i)
		} else {
			local = append(local, i)
		}
	}
	for _, i := range local {
		if ctx.Err() != nil {
			break
		}
		r.Progress.Stage(StageTraffic, fmt.Sprintf("point %s needs hardware lab %s: it runs here, not on %s", plan.Points[i].Name, plan.Points[i].Lab, exec.Name()))
		if err := r.RunPoint(ctx, s, dir, i, Placement{Executor: "local", Node: m.Host}); err != nil {
			r.Logger.Warn("point did not run", "point", plan.Points[i].Name, "err", err)
		}
	}
	if len(remote) > 0 && ctx.Err() == nil {
		if err := exec.Execute(ctx, dir, remote); err != nil {
			st.out.Warnings = append(st.out.Warnings, fmt.Sprintf("%s: %v", exec.Name(), err))
		}
	}
	r.Progress.Stage(StageGather, fmt.Sprintf("%d points", len(plan.Points)))
	if err := st.gather(); err != nil {
		m.Outcome, m.Stage, m.Error = OutcomeFailed, StageGather, err.Error()
		st.save()
		return st.out, fmt.Errorf("run %s: gather: %w", m.RunID, err)
	}
	return st.finish(ctx, func() {}) // each point released its own lab
}
