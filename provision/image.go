package provision

import (
	"context"
	"errors"
	"fmt"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// ImageChange is a switch that does not run the wanted image (healthily).
type ImageChange struct {
	Switch string `json:"switch"`
	From   string `json:"from"` // the active image now, "" for none
	To     string `json:"to"`
	Why    string `json:"why"`
}

// PlanImage reads every switch's images and health and lists the switches
// where b's image is not active and healthy; it changes nothing.
func PlanImage(ctx context.Context, d *tofino.Driver, lab *inventory.Lab, b *tofino.Bundle, progress Progress) ([]ImageChange, error) {
	ts, err := tofino.Targets(lab, nil)
	if err != nil {
		return nil, err
	}
	ss, err := d.Status(ctx, ts, tofino.Progress(progress))
	return ImageDrift(ss, b.Manifest.Ref()), err
}

// ImageDrift lists the switches of a status read that do not run image
// want healthily.
func ImageDrift(ss []tofino.Status, want string) []ImageChange {
	var out []ImageChange
	for _, s := range ss {
		c := ImageChange{Switch: s.Switch, From: s.Active, To: want}
		switch {
		case s.Error != "":
			c.Why = "status unknown: " + s.Error
		case s.Active != want:
			c.Why = "another image is active"
			if s.Active == "" {
				c.Why = "no image activated by labctl"
			}
		case !s.Healthy:
			c.Why = "not healthy: " + s.Health.Problem()
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

// ApplyImage pushes b to every switch (a switch that has it keeps its
// copy) and activates it on each switch the push reached. The result per
// switch is its activation, or its push where that failed. A switch whose
// activation fails is back on its previous image (see tofino.Driver).
func ApplyImage(ctx context.Context, d *tofino.Driver, lab *inventory.Lab, b *tofino.Bundle, progress Progress) ([]tofino.Result, error) {
	ts, err := tofino.Targets(lab, nil)
	if err != nil {
		return nil, err
	}
	pushed, pushErr := d.Push(ctx, ts, b, tofino.Progress(progress))
	if pushed == nil {
		return nil, pushErr
	}
	byName := map[string]tofino.Result{}
	var ready []sshdrv.Target
	for i, r := range pushed { // in target order
		byName[r.Switch] = r
		if r.Outcome != tofino.Failed {
			ready = append(ready, ts[i])
		}
	}
	var activateErr error
	if len(ready) > 0 {
		var rs []tofino.Result
		rs, activateErr = d.Activate(ctx, ready, b.Manifest.Ref(), tofino.Progress(progress))
		for _, r := range rs {
			byName[r.Switch] = r
		}
	}
	out := make([]tofino.Result, 0, len(ts))
	for _, t := range ts {
		out = append(out, byName[t.Name])
	}
	if pushErr != nil || activateErr != nil {
		return out, fmt.Errorf("image %s: %w", b.Manifest.Ref(), errors.Join(pushErr, activateErr))
	}
	return out, nil
}

// VerifyImage reads back: the switches not running b's image healthily;
// err wraps ErrDrift when there are any.
func VerifyImage(ctx context.Context, d *tofino.Driver, lab *inventory.Lab, b *tofino.Bundle, progress Progress) ([]ImageChange, error) {
	drift, err := PlanImage(ctx, d, lab, b, progress)
	if err == nil && len(drift) > 0 {
		err = fmt.Errorf("%d switches do not run %s: %w", len(drift), b.Manifest.Ref(), ErrDrift)
	}
	return drift, err
}
