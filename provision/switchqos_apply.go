package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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

// SwitchPlan is what differs on the lab's switches, and notes on entries
// they hold that the profile does not name.
type SwitchPlan struct {
	Changes []SwitchChange `json:"changes"`
	Notes   []Note         `json:"notes,omitempty"`
}

// Outcomes of a SwitchResult.
const (
	Committed      = "committed"       // the switch has the profile (read back)
	Unchanged      = "unchanged"       // it had it already
	Failed         = "failed"          // see Error; the switch is on its previous config
	RolledBack     = "rolled-back"     // staged, then undone (--atomic, or the apply was interrupted)
	RollbackFailed = "rollback-failed" // undoing a change failed too: the switch is in neither state
	NotStarted     = "not-started"     // the apply was interrupted before this switch: untouched
)

// SwitchResult is what happened on one switch during an apply.
type SwitchResult struct {
	Switch  string `json:"switch"`
	Driver  string `json:"driver"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Restored is set when labctl wrote the previous state back itself
	// (the SDE shell has no confirmed commit) and read it back.
	Restored bool  `json:"restored,omitempty"`
	err      error // Error as it came, for errors.Is/As
}

func (r *SwitchResult) set(outcome string, err error) {
	r.Outcome, r.err = outcome, err
	if err != nil {
		r.Error = err.Error()
	}
}

// byName are targets that only name the lab's switches: the loops over
// switches are bounded by the pool, and each switch is then reached
// through its own driver's endpoint.
func byName(lab *inventory.Lab) []sshdrv.Target {
	ts := make([]sshdrv.Target, len(lab.Switches))
	for i, sw := range lab.Switches {
		ts[i] = sshdrv.Target{Name: sw.Name}
	}
	return ts
}

// planOne reads one switch and diffs it against want; notes are entries
// the switch has that want neither sets nor removes.
func planOne(ctx context.Context, s switchSession, sw *inventory.Switch, want switchqos.Config) ([]switchqos.Setting, []Note, error) {
	ports, have, err := s.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	w := s.Want(want)
	var notes []Note
	seen := map[string]bool{}
	for _, p := range ports {
		for _, u := range switchqos.Unnamed(have[p], w) {
			if !seen[u.Field] { // tables shared by every port: one note
				seen[u.Field] = true
				notes = append(notes, Note{Device: sw.Name, Text: fmt.Sprintf("%s is %s, which the profile does not name; "+
					"name it, or give it as off to remove it", u.Field, u.From)})
			}
		}
	}
	return switchqos.MergePorts(ports, have, w), notes, nil
}

// PlanSwitches reads every switch through its driver and diffs it against
// the profile; it changes nothing. Changes are in the lab's switch order,
// each switch's in the model's field order.
func PlanSwitches(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, progress Progress) (*SwitchPlan, error) {
	want := p.Want()
	type one struct {
		diffs []switchqos.Setting
		notes []Note
	}
	per, errs := sshdrv.Each(ctx, pool, byName(lab), progress, func(ctx context.Context, t sshdrv.Target) (one, error) {
		ctx, cancel := context.WithTimeout(ctx, StepTimeout)
		defer cancel()
		sw, _ := lab.Switch(t.Name)
		s, err := openSwitch(ctx, pool, lab, sw, 0, "")
		if err != nil {
			return one{}, err
		}
		defer s.Close()
		d, n, err := planOne(ctx, s, sw, want)
		return one{d, n}, err
	})
	plan := &SwitchPlan{Changes: []SwitchChange{}}
	for i, o := range per {
		sw := &lab.Switches[i]
		for _, d := range o.diffs {
			plan.Changes = append(plan.Changes, SwitchChange{Switch: sw.Name, Driver: driverOf(sw), Setting: d})
		}
		plan.Notes = append(plan.Notes, o.notes...)
	}
	return plan, errors.Join(errs...)
}

// ReadSwitch reads one switch's QoS through its driver, per port ("" for
// drivers that configure the switch as a whole), within StepTimeout.
func ReadSwitch(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, name string) (map[string]switchqos.Config, error) {
	sw, ok := lab.Switch(name)
	if !ok {
		return nil, fmt.Errorf("no switch %s in lab %s", name, lab.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	s, err := openSwitch(ctx, pool, lab, sw, 0, "")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	_, have, err := s.Read(ctx)
	return have, err
}

// switchRun is one switch during an apply: its result, and its session
// and wanted config while its change is staged.
type switchRun struct {
	SwitchResult
	s    switchSession // nil unless staged
	want switchqos.Config
}

// ApplySwitches sets the profile on every switch that differs, each
// through its driver, in two phases, and returns a result for every
// switch in the lab's order.
//
// Phase one stages the change on every switch in parallel (NETCONF: a
// persistent confirmed commit, which the switch undoes by itself unless
// confirmed within ConfirmTimeout; SDE shell: written and read back, or
// written back to the snapshot if that fails). A switch that fails to
// stage is on its previous configuration, and its result names it and
// what it answered. Switches that already match are left alone.
//
// Phase two decides, and runs to its end even if ctx is cancelled (each
// step bounded by StepTimeout), so no switch is left half done or
// unreported:
//   - if ctx ended during phase one, or atomic and a switch failed, every
//     staged switch is rolled back (NETCONF: cancel-commit; SDE: the
//     snapshot written back and read back);
//   - with atomic, every staged switch is read back first, and all are
//     confirmed only if all match; if one does not, all are rolled back;
//   - without atomic, each staged switch is read back and confirmed, or
//     rolled back alone if it does not match.
//
// A session that drops does not split the switches: phase two's steps
// reach the switch again (NETCONF: a new session confirms or cancels the
// commit by its persist token; SDE: the pool redials and the read or the
// snapshot's write is repeated), and a stage whose session broke is
// cancelled by its token. What atomic cannot cover is labctl itself
// stopping half way through the confirms: the NETCONF switches not yet
// confirmed then restore their old configuration when ConfirmTimeout
// expires, and SDE switches keep what was written (docs/provisioning.md).
func ApplySwitches(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, atomic bool, progress Progress) ([]SwitchResult, error) {
	want := p.Want()
	confirm := ConfirmTimeout(len(lab.Switches), pool.MaxParallel())
	token := newToken()
	done := newCounter(progress, len(lab.Switches))
	runs, errs := sshdrv.Each(ctx, pool, byName(lab), nil, func(ctx context.Context, t sshdrv.Target) (*switchRun, error) {
		sw, _ := lab.Switch(t.Name)
		r := stage(ctx, pool, lab, sw, want, confirm, token)
		if r.s == nil {
			done.add(sw.Name)
		}
		return r, nil
	})
	var staged []*switchRun
	failed := false
	for i, r := range runs {
		if r == nil { // not started: ctx ended first
			sw := &lab.Switches[i]
			r = &switchRun{SwitchResult: SwitchResult{Switch: sw.Name, Driver: driverOf(sw)}}
			r.set(NotStarted, errs[i])
			runs[i] = r
		}
		switch {
		case r.s != nil:
			staged = append(staged, r)
		case r.Outcome != Unchanged:
			failed = true
		}
	}

	interrupted := ctx.Err()
	p2 := &phaseTwo{ctx: context.WithoutCancel(ctx), pool: pool, staged: staged, done: done}
	p2.run(interrupted != nil || (atomic && failed), atomic)

	out := make([]SwitchResult, len(runs))
	var all []error
	for i, r := range runs {
		out[i] = r.SwitchResult
		if r.Outcome != NotStarted && r.err != nil {
			all = append(all, r.err)
		}
	}
	if interrupted != nil {
		all = append(all, fmt.Errorf("switch QoS apply interrupted (every staged switch rolled back): %w", interrupted))
	}
	return out, errors.Join(all...)
}

// stage is phase one on one switch: read, diff, stage. The result is
// final unless the change is staged (r.s set).
func stage(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, want switchqos.Config, confirm time.Duration, token string) *switchRun {
	r := &switchRun{SwitchResult: SwitchResult{Switch: sw.Name, Driver: driverOf(sw)}}
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	s, err := openSwitch(ctx, pool, lab, sw, confirm, token)
	if err != nil {
		r.set(Failed, err)
		return r
	}
	diffs, _, err := planOne(ctx, s, sw, want)
	if err != nil || len(diffs) == 0 {
		s.Close()
		if err != nil {
			r.set(Failed, err)
		} else {
			r.set(Unchanged, nil)
		}
		return r
	}
	r.want = s.Want(want)
	restored, err := s.Stage(ctx, r.want)
	if err != nil {
		s.Close()
		outcome := Failed
		var rb *tofino.RollbackError // either driver's
		if errors.As(err, &rb) {
			outcome = RollbackFailed
		}
		r.set(outcome, err)
		r.Restored = restored
		return r
	}
	r.s = s
	return r
}

// counter tells progress about devices as their results become final.
type counter struct {
	mu          sync.Mutex
	done, total int
	progress    Progress
}

func newCounter(p Progress, total int) *counter { return &counter{progress: p, total: total} }

func (c *counter) add(device string) {
	if c.progress == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done++
	c.progress(device, c.done, c.total)
}
