package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// phaseTwo settles the switches ApplySwitches staged: it confirms them or
// rolls them back. Its context is not the caller's: it runs to its end
// even when the apply is interrupted, each step on a switch bounded by
// StepTimeout, so no switch is left staged and unreported.
type phaseTwo struct {
	ctx    context.Context // context.WithoutCancel of the apply's
	pool   *sshdrv.Pool    // bounds the parallelism
	staged []*switchRun
	done   *counter
}

// run rolls every staged switch back (rollbackAll), or reads each back
// and confirms it: with atomic, only once every one read back as wanted,
// else all are rolled back; without, each on its own.
func (p *phaseTwo) run(rollbackAll, atomic bool) {
	check := func(r *switchRun) error {
		return p.step(func(ctx context.Context) error { return r.s.Check(ctx, r.want) })
	}
	switch {
	case rollbackAll:
		p.each(func(r *switchRun) { p.rollback(r, nil) })
	case atomic:
		var mu sync.Mutex
		mismatch := false
		bad := map[*switchRun]error{}
		p.eachStaged(func(r *switchRun) {
			if err := check(r); err != nil {
				mu.Lock()
				mismatch, bad[r] = true, err
				mu.Unlock()
			}
		})
		p.each(func(r *switchRun) {
			if mismatch {
				p.rollback(r, bad[r]) // nil for the switches that read back well
			} else {
				p.confirm(r)
			}
		})
	default:
		p.each(func(r *switchRun) {
			if err := check(r); err != nil {
				p.rollback(r, err)
			} else {
				p.confirm(r)
			}
		})
	}
}

// step runs one step on one switch, bounded by StepTimeout.
func (p *phaseTwo) step(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(p.ctx, StepTimeout)
	defer cancel()
	return f(ctx)
}

// eachStaged runs fn on every staged switch, in parallel within the
// pool's bound.
func (p *phaseTwo) eachStaged(fn func(r *switchRun)) {
	ts, of := make([]sshdrv.Target, len(p.staged)), map[string]*switchRun{}
	for i, r := range p.staged {
		ts[i], of[r.Switch] = sshdrv.Target{Name: r.Switch}, r
	}
	_, _ = sshdrv.Each(p.ctx, p.pool, ts, nil, func(_ context.Context, t sshdrv.Target) (struct{}, error) {
		fn(of[t.Name])
		return struct{}{}, nil
	})
}

// each is eachStaged for fn that settle a switch: its session is closed
// and its result final afterwards.
func (p *phaseTwo) each(fn func(r *switchRun)) {
	p.eachStaged(func(r *switchRun) {
		fn(r)
		r.s.Close()
		r.s = nil
		p.done.add(r.Switch)
	})
}

// rollback undoes a staged change: the switch failed if cause is set,
// else it is rolled back because of others (or an interruption).
func (p *phaseTwo) rollback(r *switchRun, cause error) {
	outcome := RolledBack
	if cause != nil {
		outcome = Failed
	}
	if err := p.step(r.s.Cancel); err != nil {
		r.set(RollbackFailed, errors.Join(cause, fmt.Errorf("rolling back: %w", err)))
		return
	}
	r.set(outcome, cause)
	r.Restored = r.Driver == DriverSDE
}

// confirm makes a staged change permanent. A switch that refuses its
// confirming commit is rolled back at once, so its result is true now, not
// only once its confirm timeout expires.
func (p *phaseTwo) confirm(r *switchRun) {
	err := p.step(r.s.Confirm)
	if err == nil {
		r.set(Committed, nil)
		return
	}
	if cerr := p.step(r.s.Cancel); cerr != nil {
		r.set(RollbackFailed, fmt.Errorf("%w; rolling back: %w (the switch restores its previous config when the confirm timeout expires)", err, cerr))
		return
	}
	r.set(Failed, fmt.Errorf("%w (rolled back)", err))
}
