package provision

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// SwitchChange is one QoS difference on one switch.
type SwitchChange struct {
	Switch string `json:"switch"`
	Driver string `json:"driver"`
	switchqos.Setting
}

// Outcomes of a SwitchResult.
const (
	Committed      = "committed"       // the switch has the profile (read back)
	Unchanged      = "unchanged"       // it had it already
	Failed         = "failed"          // see Error; the switch is on its previous config (read back)
	RolledBack     = "rolled-back"     // staged, then undone because another switch failed (--atomic)
	RollbackFailed = "rollback-failed" // undoing a change failed too: the switch is in neither state
)

// SwitchResult is what happened on one switch during an apply.
type SwitchResult struct {
	Switch  string `json:"switch"`
	Driver  string `json:"driver"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Restored is set when labctl wrote the previous state back itself
	// (the SDE shell has no confirmed commit) and read it back.
	Restored bool `json:"restored,omitempty"`
}

// switchTargets names every switch for pool.ForEach (which bounds the
// parallelism and names devices in errors).
func switchTargets(lab *inventory.Lab) []sshdrv.Target {
	ts := make([]sshdrv.Target, len(lab.Switches))
	for i, sw := range lab.Switches {
		ts[i] = sshdrv.Target{Name: sw.Name}
	}
	return ts
}

// planOne reads one switch and diffs it against want.
func planOne(ctx context.Context, s switchSession, want switchqos.Config) ([]switchqos.Setting, error) {
	ports, have, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	return switchqos.MergePorts(ports, have, s.Want(want)), nil
}

// PlanSwitches reads every switch through its driver and diffs it against
// the profile; it changes nothing. Changes are sorted by switch, then in
// the model's field order.
func PlanSwitches(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, progress Progress) ([]SwitchChange, error) {
	want := p.Want()
	var mu sync.Mutex
	var out []SwitchChange
	done := 0
	err := pool.ForEach(ctx, switchTargets(lab), func(ctx context.Context, t sshdrv.Target) error {
		sw, _ := lab.Switch(t.Name)
		s, err := openSwitch(ctx, pool, lab, sw)
		var diffs []switchqos.Setting
		if err == nil {
			diffs, err = planOne(ctx, s, want)
			s.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		for _, d := range diffs {
			out = append(out, SwitchChange{Switch: sw.Name, Driver: driverOf(sw), Setting: d})
		}
		done++
		if progress != nil {
			progress(sw.Name, done, len(lab.Switches))
		}
		return err
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Switch < out[j].Switch })
	return out, err
}

// PlanQoS is PlanSwitches without progress.
func PlanQoS(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile) ([]SwitchChange, error) {
	return PlanSwitches(ctx, pool, lab, p, nil)
}

// ReadSwitch reads one switch's QoS through its driver, per port ("" for
// drivers that configure the switch as a whole).
func ReadSwitch(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, name string) (map[string]switchqos.Config, error) {
	sw, ok := lab.Switch(name)
	if !ok {
		return nil, fmt.Errorf("no switch %s in lab %s", name, lab.Name)
	}
	s, err := openSwitch(ctx, pool, lab, sw)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	_, have, err := s.Read(ctx)
	return have, err
}

// ApplySwitches sets the profile on every switch that differs, each
// through its driver, in two phases. Phase one stages the change on every
// switch (NETCONF: a confirmed commit; SDE shell: written and read back, or
// written back to the snapshot if that fails). Phase two, if every switch
// staged, confirms each (NETCONF: read back, then the confirming commit).
//
// If a switch fails to stage, it is on its previous configuration and the
// result names it and what it answered. With atomic, every switch that
// staged is then rolled back too (NETCONF: cancel-commit; SDE: the
// snapshot is written back and read back), so all keep their previous
// configuration; without it, the others are confirmed and keep the new
// one. A failure in phase two (a read-back that disagrees) is not undone
// on the other switches. Switches that already match are left alone.
func ApplySwitches(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, atomic bool, progress Progress) ([]SwitchResult, error) {
	want := p.Want()
	var mu sync.Mutex
	results := map[string]*SwitchResult{}
	staged := map[string]switchSession{}
	done := 0
	finish := func(sw *inventory.Switch, outcome string, restored bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		r := &SwitchResult{Switch: sw.Name, Driver: driverOf(sw), Outcome: outcome, Restored: restored}
		if err != nil {
			r.Error = err.Error()
		}
		results[sw.Name] = r
		if progress != nil {
			done++
			progress(sw.Name, done, len(lab.Switches))
		}
	}
	stageErr := pool.ForEach(ctx, switchTargets(lab), func(ctx context.Context, t sshdrv.Target) error {
		sw, _ := lab.Switch(t.Name)
		s, err := openSwitch(ctx, pool, lab, sw)
		if err != nil {
			finish(sw, Failed, false, err)
			return err
		}
		diffs, err := planOne(ctx, s, want)
		if err == nil && len(diffs) == 0 {
			finish(sw, Unchanged, false, nil)
			return s.Close()
		}
		restored := false
		if err == nil {
			restored, err = s.Stage(ctx, s.Want(want))
		}
		if err != nil {
			outcome := Failed
			var rb *tofino.RollbackError
			if errors.As(err, &rb) {
				outcome = RollbackFailed
			}
			finish(sw, outcome, restored, err)
			s.Close()
			return err
		}
		mu.Lock()
		staged[sw.Name] = s
		mu.Unlock()
		return nil
	})
	rollback := atomic && stageErr != nil
	var names []sshdrv.Target
	for _, t := range switchTargets(lab) {
		if staged[t.Name] != nil {
			names = append(names, t)
		}
	}
	phase2Err := pool.ForEach(ctx, names, func(ctx context.Context, t sshdrv.Target) error {
		sw, _ := lab.Switch(t.Name)
		s := staged[t.Name]
		defer s.Close()
		if rollback {
			if err := s.Cancel(ctx); err != nil {
				finish(sw, RollbackFailed, false, err)
				return err
			}
			finish(sw, RolledBack, driverOf(sw) == DriverSDE, nil)
			return nil
		}
		if err := s.Confirm(ctx, s.Want(want)); err != nil {
			finish(sw, Failed, false, err)
			return err
		}
		finish(sw, Committed, false, nil)
		return nil
	})
	out := make([]SwitchResult, 0, len(results))
	for _, r := range results {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Switch < out[j].Switch })
	return out, errors.Join(stageErr, phase2Err)
}

// ApplyQoS is ApplySwitches without progress.
func ApplyQoS(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, atomic bool) ([]SwitchResult, error) {
	return ApplySwitches(ctx, pool, lab, p, atomic, nil)
}
