package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

// RNICPlan is the changes that would bring a lab's RNICs to their
// profile, per device, and notes on what a host's driver stack cannot do.
type RNICPlan struct {
	Lab     string            `json:"lab"`
	Changes []connectx.Change `json:"changes"`
	Notes   []Note            `json:"notes,omitempty"`
}

// Note is something a plan points out that is not a change: what a
// profile asks that a device cannot do, or what a device holds that the
// profile does not name.
type Note struct {
	Device string `json:"device"`
	Where  string `json:"where,omitempty"` // a host's RNIC
	Text   string `json:"note"`
}

// Progress hears about devices as they finish; nil is silent.
type Progress = sshdrv.Progress

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
// results in the lab's host order (then RNIC, then field order).
func forHosts(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, progress Progress,
	fn func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error)) (hostResult, error) {
	ts, err := sshdrv.HostTargets(lab)
	if err != nil {
		return hostResult{}, err
	}
	per, errs := sshdrv.Each(ctx, pool, ts, progress, func(ctx context.Context, t sshdrv.Target) (hostResult, error) {
		h, _ := lab.Host(t.Name)
		return fn(ctx, runner(pool, t), h)
	})
	all := hostResult{changes: []connectx.Change{}}
	for _, r := range per {
		all.changes = append(all.changes, r.changes...)
		all.notes = append(all.notes, r.notes...)
	}
	return all, errors.Join(errs...)
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
			out.notes = append(out.notes, Note{Device: h.Name, Where: r.Device, Text: n})
		}
	}
	return out, nil
}

// PlanRNIC reads every host's RNICs and diffs them against the profile;
// it changes nothing.
func PlanRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *connectx.Profile, progress Progress) (*RNICPlan, error) {
	r, err := forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error) {
		return diffHost(ctx, run, h, p)
	})
	return &RNICPlan{Lab: lab.Name, Changes: r.changes, Notes: r.notes}, err
}

// ApplyRNIC makes exactly the plan's changes, host by host in parallel
// (each host's in order, stopping at its first failure). It returns what
// was applied; a failure on one host does not stop the others, and every
// failure is reported with its host. Reading back is Verify's (Apply reads
// the whole lab back after all its parts).
func ApplyRNIC(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, plan *RNICPlan, progress Progress) ([]connectx.Change, error) {
	byHost := map[string][]connectx.Change{}
	for _, c := range plan.Changes {
		byHost[c.Host] = append(byHost[c.Host], c)
	}
	r, err := forHosts(ctx, pool, lab, progress, func(ctx context.Context, run connectx.Run, h *inventory.Host) (hostResult, error) {
		applied, err := connectx.Apply(ctx, run, byHost[h.Name])
		return hostResult{changes: applied}, err
	})
	return r.changes, err
}

// ErrDrift is returned when devices differ from the profile.
var ErrDrift = errors.New("devices differ from the profile")
