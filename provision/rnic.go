package provision

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

// Plan is the changes that would bring a lab to its profiles, per device.
type Plan struct {
	Lab     string            `json:"lab"`
	Changes []connectx.Change `json:"changes"`
}

// Progress hears about devices as they finish; nil is silent.
type Progress func(device string, done, total int)

func targets(lab *inventory.Lab) ([]sshdrv.Target, error) {
	var ts []sshdrv.Target
	for _, h := range lab.Hosts {
		cred, ok := lab.CredentialFor(h.Name)
		if !ok {
			return nil, fmt.Errorf("host %s has no credential in lab %s", h.Name, lab.Name)
		}
		ts = append(ts, sshdrv.Target{Name: h.Name, Addr: h.Mgmt.SSH, Cred: cred})
	}
	return ts, nil
}

func runner(pool *sshdrv.Pool, t sshdrv.Target) connectx.Run {
	return func(ctx context.Context, cmd string) ([]byte, error) {
		r, err := pool.Exec(ctx, t, cmd)
		if err != nil {
			return nil, err
		}
		return r.Stdout, r.Err()
	}
}

// forHosts runs fn on every host with the pool's parallelism and collects
// changes in a stable order (host, then RNIC, then field order).
func forHosts(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, progress Progress,
	fn func(ctx context.Context, run connectx.Run, h *inventory.Host) ([]connectx.Change, error)) ([]connectx.Change, error) {
	ts, err := targets(lab)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	per := map[string][]connectx.Change{}
	done := 0
	err = pool.ForEach(ctx, ts, func(ctx context.Context, t sshdrv.Target) error {
		h, _ := lab.Host(t.Name)
		ch, err := fn(ctx, runner(pool, t), h)
		mu.Lock()
		defer mu.Unlock()
		per[t.Name] = ch
		done++
		if progress != nil {
			progress(t.Name, done, len(ts))
		}
		return err
	})
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	var all []connectx.Change
	for _, n := range names {
		all = append(all, per[n]...)
	}
	return all, err
}

// PlanRNIC reads every host's RNICs and diffs them against the profile;
// it changes nothing.
func PlanRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *connectx.Profile, progress Progress) (*Plan, error) {
	ch, err := forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) ([]connectx.Change, error) {
		var out []connectx.Change
		for _, r := range h.RNICs {
			st, err := connectx.ReadState(ctx, run, r, p.ECN != nil)
			if err != nil {
				return out, fmt.Errorf("host %s: %s: %w", h.Name, r.Device, err)
			}
			out = append(out, p.Diff(h.Name, r, st)...)
		}
		return out, nil
	})
	return &Plan{Lab: lab.Name, Changes: ch}, err
}

// ApplyRNIC makes exactly the plan's changes, host by host in parallel, and
// returns what was applied; a failure on one host does not stop the
// others, and every failure is reported with its host.
func ApplyRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, plan *Plan, progress Progress) ([]connectx.Change, error) {
	byHost := map[string][]connectx.Change{}
	for _, c := range plan.Changes {
		byHost[c.Host] = append(byHost[c.Host], c)
	}
	return forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) ([]connectx.Change, error) {
		return connectx.Apply(ctx, run, byHost[h.Name])
	})
}

// ErrDrift is returned by VerifyRNIC when devices differ from the profile.
var ErrDrift = errors.New("devices differ from the profile")

// VerifyRNIC reads back and returns the drift; err wraps ErrDrift when
// there is any.
func VerifyRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *connectx.Profile, progress Progress) ([]connectx.Change, error) {
	plan, err := PlanRNIC(ctx, pool, lab, p, progress)
	if err != nil {
		return plan.Changes, err
	}
	if len(plan.Changes) > 0 {
		return plan.Changes, fmt.Errorf("%d settings: %w", len(plan.Changes), ErrDrift)
	}
	return nil, nil
}
