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

// readImages is every switch's images and health.
func readImages(ctx context.Context, d *tofino.Driver, lab *inventory.Lab, progress Progress) ([]tofino.Status, error) {
	ts, err := tofino.Targets(lab, nil)
	if err != nil {
		return nil, err
	}
	return d.Status(ctx, ts, tofino.Progress(progress))
}

// imageDrift lists the switches of a status read that do not run image
// want healthily.
func imageDrift(ss []tofino.Status, want string) []ImageChange {
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

// SDEReset names the switches whose QoS set through the SDE shell went
// back to its defaults: those among rs whose bf_switchd restarted (an
// image start resets the traffic manager and the program's tables).
func SDEReset(lab *inventory.Lab, rs []tofino.Result) []string {
	var reset []string
	for _, r := range rs {
		if sw, ok := lab.Switch(r.Switch); ok && r.Restarted && driverOf(sw) == DriverSDE {
			reset = append(reset, r.Switch)
		}
	}
	return reset
}

// applyImage pushes b to every switch (a switch that has it keeps its
// copy) and activates it on each switch the push reached. The result per
// switch is its activation, or its push where that failed. A switch whose
// activation fails is back on its previous image (see tofino.Driver).
func applyImage(ctx context.Context, d *tofino.Driver, lab *inventory.Lab, b *tofino.Bundle, progress Progress) ([]tofino.Result, error) {
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
	failed := 0
	for _, t := range ts {
		out = append(out, byName[t.Name])
		if byName[t.Name].Error != "" {
			failed++
		}
	}
	if pushErr != nil || activateErr != nil {
		return out, fmt.Errorf("image %s: %d of %d switches failed:\n%w", b.Manifest.Ref(), failed, len(out), errors.Join(pushErr, activateErr))
	}
	return out, nil
}
