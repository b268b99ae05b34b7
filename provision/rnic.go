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

// Plan is the changes that would bring a lab's RNICs to their profile, per
// device, and notes on what a host's driver stack cannot do.
type Plan struct {
	Lab     string            `json:"lab"`
	Changes []connectx.Change `json:"changes"`
	Notes   []Note            `json:"notes,omitempty"`
	profile *connectx.Profile // for the read-back after apply
}

// Note is something a profile asks that a device cannot do (not a change).
type Note struct {
	Host   string `json:"host"`
	Device string `json:"device"`
	Text   string `json:"note"`
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

// hostResult is what one host contributed.
type hostResult struct {
	changes []connectx.Change
	notes   []Note
}

// forHosts runs fn on every host with the pool's parallelism and collects
// results in a stable order (host, then RNIC, then field order).
func forHosts(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, progress Progress,
	fn func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error)) (hostResult, error) {
	ts, err := targets(lab)
	if err != nil {
		return hostResult{}, err
	}
	var mu sync.Mutex
	per := map[string]hostResult{}
	done := 0
	err = pool.ForEach(ctx, ts, func(ctx context.Context, t sshdrv.Target) error {
		h, _ := lab.Host(t.Name)
		r, err := fn(ctx, runner(pool, t), h)
		mu.Lock()
		defer mu.Unlock()
		per[t.Name] = r
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
	var all hostResult
	for _, n := range names {
		all.changes = append(all.changes, per[n].changes...)
		all.notes = append(all.notes, per[n].notes...)
	}
	return all, err
}

// diffHost reads every RNIC of a host and diffs it against the profile.
func diffHost(ctx context.Context, run connectx.Run, h *inventory.Host, p *connectx.Profile) (hostResult, error) {
	var out hostResult
	for _, r := range h.RNICs {
		st, err := connectx.ReadState(ctx, run, r, p.NeedsECN())
		if err != nil {
			return out, fmt.Errorf("host %s: %s: %w", h.Name, r.Device, err)
		}
		out.changes = append(out.changes, p.Diff(h.Name, r, st)...)
		for _, n := range p.Notes(st) {
			out.notes = append(out.notes, Note{Host: h.Name, Device: r.Device, Text: n})
		}
	}
	return out, nil
}

// PlanRNIC reads every host's RNICs and diffs them against the profile;
// it changes nothing.
func PlanRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *connectx.Profile, progress Progress) (*Plan, error) {
	r, err := forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error) {
		return diffHost(ctx, run, h, p)
	})
	return &Plan{Lab: lab.Name, Changes: r.changes, Notes: r.notes, profile: p}, err
}

// ApplyRNIC makes exactly the plan's changes, host by host in parallel,
// then reads every RNIC of each changed host back and compares it with the
// profile. It returns what was applied; a failure on one host does not
// stop the others, and every failure or value that reads back wrong is
// reported with its host.
func ApplyRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, plan *Plan, progress Progress) ([]connectx.Change, error) {
	byHost := map[string][]connectx.Change{}
	for _, c := range plan.Changes {
		byHost[c.Host] = append(byHost[c.Host], c)
	}
	r, err := forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error) {
		applied, err := connectx.Apply(ctx, run, byHost[h.Name])
		if err != nil || len(applied) == 0 || plan.profile == nil {
			return hostResult{changes: applied}, err
		}
		left, err := diffHost(ctx, run, h, plan.profile)
		if err == nil && len(left.changes) > 0 {
			c := left.changes[0]
			err = fmt.Errorf("host %s: %s: read-back after apply: %d settings differ, first %s = %s (want %s)",
				h.Name, c.Device, len(left.changes), c.Field, c.From, c.To)
		}
		return hostResult{changes: applied}, err
	})
	return r.changes, err
}

// ErrDrift is returned when devices differ from the profile.
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
