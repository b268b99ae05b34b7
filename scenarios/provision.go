package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/provision"
)

// provisionLab makes the session's lab match the image and profiles before
// traffic, recording the plan, what each device did, and the read-back in
// pdir (the archive's provision/). The image goes first: one that fails to
// activate stops it before the profiles. Any failure or remaining drift is
// an error: the points it was for send nothing.
func (r *Runner) provisionLab(ctx context.Context, sess *session, p Provision, pdir string) error {
	ssh, lab := sess.ssh, sess.lab
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	if p.Image != "" {
		if err := provisionImage(ctx, sess, p.Image, pdir); err != nil {
			return err
		}
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

// provisionImage activates the image bundle on every switch, archiving
// image-plan.json, image-apply.json and image-readback.json.
func provisionImage(ctx context.Context, sess *session, bundle, pdir string) error {
	b, err := tofino.OpenBundle(bundle)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Validate(); err != nil {
		return fmt.Errorf("image %s is not valid:\n%w", bundle, err)
	}
	d := tofino.NewDriver(sess.ssh, sess.lab)
	plan, err := provision.PlanImage(ctx, d, sess.lab, b, nil)
	_ = writeJSON(filepath.Join(pdir, "image-plan.json"), plan)
	if err != nil {
		return fmt.Errorf("image plan: %w", err)
	}
	if len(plan) > 0 {
		res, err := provision.ApplyImage(ctx, d, sess.lab, b, nil)
		_ = writeJSON(filepath.Join(pdir, "image-apply.json"), res)
		if err != nil {
			return fmt.Errorf("image apply: %w", err)
		}
	}
	ts, err := tofino.Targets(sess.lab, nil)
	if err != nil {
		return err
	}
	st, err := d.Status(ctx, ts, nil)
	_ = writeJSON(filepath.Join(pdir, "image-readback.json"), st)
	if err != nil {
		return fmt.Errorf("image read-back: %w", err)
	}
	if drift := provision.ImageDrift(st, b.Manifest.Ref()); len(drift) > 0 {
		return fmt.Errorf("image read-back: switch %s: %s (active %q, want %s): %w", drift[0].Switch, drift[0].Why, drift[0].From, drift[0].To, provision.ErrDrift)
	}
	return nil
}
