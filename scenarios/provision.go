package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/provision"
)

// provisionLab makes the session's lab match the profiles before traffic,
// recording the plan, what each device did, and the read-back in pdir (the
// archive's provision/). Any failure or remaining drift is an error: the
// points it was for send nothing.
func (r *Runner) provisionLab(ctx context.Context, sess *session, p Provision, pdir string) error {
	ssh, lab := sess.ssh, sess.lab
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	var errs []error
	if p.SwitchProfile != "" {
		prof, err := provision.LoadQoSProfile(p.SwitchProfile)
		if err != nil {
			return err
		}
		plan, err := provision.PlanQoS(ctx, ssh, lab, prof)
		if err != nil {
			return fmt.Errorf("switch plan: %w", err)
		}
		_ = writeJSON(filepath.Join(pdir, "switch-plan.json"), plan)
		if len(plan) > 0 {
			res, err := provision.ApplyQoS(ctx, ssh, lab, prof, p.Atomic)
			_ = writeJSON(filepath.Join(pdir, "switch-apply.json"), res)
			if err != nil {
				errs = append(errs, fmt.Errorf("switch apply: %w", err))
			}
		}
		drift, err := provision.PlanQoS(ctx, ssh, lab, prof)
		_ = writeJSON(filepath.Join(pdir, "switch-readback.json"), drift)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("switch read-back: %w", err))
		case len(drift) > 0:
			errs = append(errs, fmt.Errorf("switch read-back: %d settings differ: %w", len(drift), provision.ErrDrift))
		}
	}
	if p.RNICProfile != "" {
		prof, err := connectx.LoadProfile(p.RNICProfile)
		if err != nil {
			return err
		}
		plan, err := provision.PlanRNIC(ctx, ssh, lab, prof, nil)
		if err != nil {
			return fmt.Errorf("rnic plan: %w", err)
		}
		_ = writeJSON(filepath.Join(pdir, "rnic-plan.json"), plan)
		applied, err := provision.ApplyRNIC(ctx, ssh, lab, plan, nil)
		_ = writeJSON(filepath.Join(pdir, "rnic-apply.json"), applied)
		if err != nil {
			errs = append(errs, fmt.Errorf("rnic apply: %w", err))
		}
		drift, err := provision.VerifyRNIC(ctx, ssh, lab, prof, nil)
		_ = writeJSON(filepath.Join(pdir, "rnic-readback.json"), drift)
		if err != nil {
			errs = append(errs, fmt.Errorf("rnic read-back: %w", err))
		}
	}
	return errors.Join(errs...)
}
