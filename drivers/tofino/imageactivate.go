package tofino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// State is what a switch records of its images (Root/images/state.json),
// so status survives labctl restarts and another labctl sees it.
type State struct {
	Active   string   `json:"active,omitempty"`
	Previous string   `json:"previous,omitempty"`
	Last     *Attempt `json:"last,omitempty"`
}

// Attempt is the last activation or rollback on a switch.
type Attempt struct {
	Action   string    `json:"action"` // activate | rollback
	Image    string    `json:"image"`
	Outcome  string    `json:"outcome"` // starting, then a Result outcome
	Error    string    `json:"error,omitempty"`
	Rollback string    `json:"rollback,omitempty"`
	At       time.Time `json:"at"`
}

func (d *Driver) readState(ctx context.Context, t sshdrv.Target) (State, error) {
	return readState(ctx, d.SSH, t, d.Root)
}

// readState reads switch t's image state file under root.
func readState(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, root string) (State, error) {
	var st State
	b, err := pool.ReadFile(ctx, t, statePath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil // no image was ever activated by labctl
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("device %s: %s: %w", t.Name, statePath(root), err)
	}
	return st, nil
}

// writeState replaces the state file whole (written beside and renamed).
func (d *Driver) writeState(ctx context.Context, t sshdrv.Target, st State) error {
	b, _ := json.MarshalIndent(st, "", "  ")
	return d.SSH.WriteFile(ctx, t, d.statePath(), append(b, '\n'), 0o644)
}

// Activate makes image ref (name@version, pushed before) the running
// program on every target. Each switch goes on its own: one that fails is
// brought back to the image it ran before (RolledBack) while the others
// keep the new one. A switch already running ref healthily is Unchanged.
func (d *Driver) Activate(ctx context.Context, ts []sshdrv.Target, ref string, progress Progress) ([]Result, error) {
	if _, _, err := ParseRef(ref); err != nil {
		return nil, err
	}
	rs := each(ctx, d, ts, progress, func(ctx context.Context, t sshdrv.Target) Result {
		st, err := d.readState(ctx, t)
		if err != nil {
			return failedResult(ref)(t, err)
		}
		return d.switchTo(ctx, t, st, ref, "activate")
	}, failedResult(ref))
	return rs, joinResults(rs)
}

// Rollback makes every target's previous image active again (and the
// current one its previous), with the same automatic return to the current
// image if the previous one fails to start.
func (d *Driver) Rollback(ctx context.Context, ts []sshdrv.Target, progress Progress) ([]Result, error) {
	rs := each(ctx, d, ts, progress, func(ctx context.Context, t sshdrv.Target) Result {
		st, err := d.readState(ctx, t)
		if err == nil && st.Previous == "" {
			err = fmt.Errorf("device %s: no previous image to roll back to (active: %q)", t.Name, st.Active)
		}
		if err != nil {
			return failedResult(st.Previous)(t, err)
		}
		return d.switchTo(ctx, t, st, st.Previous, "rollback")
	}, failedResult(""))
	return rs, joinResults(rs)
}

// switchTo activates ref on one switch whose state is st; an activation of
// the image already running healthily is Unchanged. Nothing changes
// on the switch until ref is verified there (and then nothing is recorded
// either: the state file keeps the last activation that did something);
// after that, any failure brings the switch back (failBack).
func (d *Driver) switchTo(ctx context.Context, t sshdrv.Target, st State, ref, action string) Result {
	res := Result{Switch: t.Name, Image: ref}
	last := &Attempt{Action: action, Image: ref, At: time.Now().UTC()}
	m, err := d.installedImage(ctx, t, ref)
	if err != nil {
		res.fail(err)
		res.Rollback = notChanged
		return res
	}
	if action == "activate" && st.Active == ref {
		if h, err := d.health(ctx, t, m); err == nil && h.Healthy() {
			return Result{Switch: t.Name, Image: ref, Outcome: Unchanged}
		}
	}
	d.Logger.Info("image: activating", "device", t.Name, "image", ref, "action", action, "active", st.Active)
	next := State{Active: ref, Previous: st.Active, Last: last}
	if st.Active == ref {
		next.Previous = st.Previous
	}
	res.Restarted = true
	err = d.start(ctx, t, m, next)
	if err == nil {
		res.Outcome = Activated
		last.Outcome = res.Outcome
		if werr := d.writeState(ctx, t, next); werr != nil {
			res.fail(fmt.Errorf("%s is running but the state file could not be written: %w", ref, werr))
		}
		return res
	}
	res.fail(err)
	d.Logger.Warn("image: activation failed; returning to the active image", "device", t.Name, "image", ref, "back_to", st.Active, "err", err)
	// The switch must not be left half-switched when the caller gives up
	// (e.g. Ctrl-C): the way back runs on its own clock.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*d.StopTimeout+d.HealthTimeout+time.Minute)
	defer cancel()
	back := d.failBack(ctx, t, st, m, last, &res)
	last.Outcome, last.Error, last.Rollback = res.Outcome, res.Error, res.Rollback
	if werr := d.writeState(ctx, t, back); werr != nil {
		res.Rollback += "; writing the state file failed: " + werr.Error()
	}
	return res
}

// notChanged is the Rollback of a result where nothing was changed.
const notChanged = "not needed: nothing was changed"

// failBack brings a switch whose start of m failed back to where it was
// (state st), says how in res, and returns the switch's state (with last
// as its last attempt):
//   - another image was active: it is started again (RolledBack);
//   - m itself was active (its re-activation failed): if its program is
//     loaded and bf_switchd runs, it is left running as it was, not
//     healthy (Degraded); otherwise the previous image is started, if
//     there is one;
//   - with nothing to return to, bf_switchd is stopped (Failed).
func (d *Driver) failBack(ctx context.Context, t sshdrv.Target, st State, m *Manifest, last *Attempt, res *Result) State {
	ref := m.Ref()
	backTo := st.Active
	if st.Active == ref {
		if h, err := d.health(ctx, t, m); err == nil && h.Running && h.Loaded {
			res.Outcome = Degraded
			res.Rollback = fmt.Sprintf("%s stays active as it was, running but not healthy (%s)", ref, h.Problem())
			if st.Previous != "" {
				res.Rollback += "; 'labctl image rollback' returns to " + st.Previous
			}
			return State{Active: ref, Previous: st.Previous, Last: last}
		}
		backTo = st.Previous
	}
	if backTo == "" {
		what := "no other image to return to"
		if st.Active == "" {
			what = "no image labctl activated to return to"
		}
		res.Rollback = what + ": bf_switchd stopped"
		if err := d.stop(ctx, t); err != nil {
			res.Rollback = what + ", and stopping bf_switchd failed: " + err.Error()
		}
		return State{Previous: st.Previous, Last: last}
	}
	back := State{Active: backTo, Previous: st.Previous, Last: last}
	if backTo != st.Active { // the image before the active one
		back.Previous = ref
	}
	old, err := d.installedImage(ctx, t, backTo)
	if err == nil {
		err = d.start(ctx, t, old, back)
	}
	if err != nil {
		res.Outcome, res.Rollback = RollbackFailed, fmt.Sprintf("bringing back %s failed: %v", backTo, err)
	} else {
		res.Outcome, res.Rollback = RolledBack, fmt.Sprintf("%s is active again and its program is loaded", backTo)
	}
	return back
}

// start stops bf_switchd, records st (whose Active is m's image) as the
// switch's state, starts bf_switchd with the image's conf and waits until
// it is healthy.
func (d *Driver) start(ctx context.Context, t sshdrv.Target, m *Manifest, st State) error {
	if err := d.stop(ctx, t); err != nil {
		return err
	}
	st.Last.Outcome = "starting " + m.Ref()
	if err := d.writeState(ctx, t, st); err != nil {
		return err
	}
	if _, err := d.run(ctx, t, "mkdir -p "+sshdrv.Quote(d.runDir())); err != nil {
		return err
	}
	if _, err := d.run(ctx, t, "rm -f "+sshdrv.Quote(d.logPath())+" "+sshdrv.Quote(d.pidPath())); err != nil {
		return err
	}
	// bf_switchd does not daemonise itself (--background only leaves out
	// its CLI), so start-stop-daemon detaches it, records its pid and sends
	// its output to the log (--output needs dpkg 1.20.6 or later).
	conf := path.Join(d.imageDir(m.Ref()), InstalledConfFile)
	cmd := fmt.Sprintf("start-stop-daemon --start --background --make-pidfile --pidfile %s --output %s --exec %s -- "+
		"--install-dir %s --conf-file %s --init-mode=cold --status-port %d --background",
		sshdrv.Quote(d.pidPath()), sshdrv.Quote(d.logPath()), sshdrv.Quote(path.Join(d.SDEInstall, "bin", "bf_switchd")), sshdrv.Quote(d.SDEInstall), sshdrv.Quote(conf), d.StatusPort)
	if _, err := d.run(ctx, t, cmd); err != nil {
		return err
	}
	return d.waitHealthy(ctx, t, m)
}

// pids lists the running bf_switchd processes.
func (d *Driver) pids(ctx context.Context, t sshdrv.Target) ([]string, error) {
	const cmd = "pgrep -f bin/bf_switchd" // the binary, not e.g. a tail of its log
	r, err := d.SSH.Exec(ctx, t, cmd)
	if err != nil {
		return nil, err
	}
	if r.ExitStatus == 1 { // procps: nothing matched
		return nil, nil
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	var pids []string
	for _, f := range strings.Fields(string(r.Stdout)) {
		if _, err := strconv.Atoi(f); err != nil {
			return nil, fmt.Errorf("device %s: command %q answered %q, not process ids", t.Name, cmd, truncate(string(r.Stdout), 200))
		}
		pids = append(pids, f)
	}
	return pids, nil
}

// stop ends every bf_switchd (one owns the ASIC; one started by hand
// counts too): TERM, then KILL if it outlives StopTimeout.
func (d *Driver) stop(ctx context.Context, t sshdrv.Target) error {
	for _, sig := range []string{"TERM", "KILL"} {
		pids, err := d.pids(ctx, t)
		if err != nil || len(pids) == 0 {
			return err
		}
		if _, err := d.run(ctx, t, "kill -"+sig+" "+strings.Join(pids, " ")); err != nil {
			var ce *sshdrv.CommandError
			if !errors.As(err, &ce) { // a process that exited meanwhile is fine
				return err
			}
		}
		deadline := time.Now().Add(d.StopTimeout)
		for time.Now().Before(deadline) {
			if pids, err = d.pids(ctx, t); err != nil || len(pids) == 0 {
				return err
			}
			if err := sleep(ctx, d.pollEvery()); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("device %s: bf_switchd is still running after kill -KILL (pgrep -f bin/bf_switchd)", t.Name)
}

func (d *Driver) pollEvery() time.Duration {
	return min(time.Second, max(d.HealthTimeout/30, 20*time.Millisecond))
}

func sleep(ctx context.Context, dt time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(dt):
		return nil
	}
}
