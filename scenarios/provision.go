package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/provision"
)

// provisionLab makes the session's lab match the image and profiles before
// traffic, with provision.Apply (the rules 'labctl provision apply'
// follows), and records in rec (the archive's provision/) the whole
// report (report.json) and its parts: per image, switch QoS and RNIC
// profile, the plan, what each device did, and the read-back. Any failure
// or remaining drift is an error: the points it was for send nothing.
// Once the RNICs have a RoCE ToS from the profile, the session's flows
// carry it as their traffic class (session.tclass).
func (r *Runner) provisionLab(ctx context.Context, sess *session, p Provision, rec archive.Provisioning) error {
	if err := os.MkdirAll(rec.Path(), 0o755); err != nil {
		return err
	}
	in, err := provision.LoadIntent(p.Image, p.SwitchProfile, p.RNICProfile)
	if err != nil {
		return err
	}
	defer in.Close()
	in.Atomic = p.Atomic
	rep, err := provision.Apply(ctx, sess.ssh, sess.lab, in, nil)
	if werr := writeReport(rec, in, rep); werr != nil {
		err = errors.Join(err, fmt.Errorf("provision record: %w", werr))
	}
	if err == nil && in.RNIC != nil && in.RNIC.RoCETOS != nil {
		sess.tclass = *in.RNIC.RoCETOS
	}
	return err
}

// writeReport records an apply: report.json, and per managed part
// <part>-plan.json, <part>-apply.json and <part>-readback.json.
func writeReport(rec archive.Provisioning, in provision.Intent, rep *provision.Report) error {
	files := map[string]any{rec.Report(): rep}
	drift := rep.Drift
	if drift == nil {
		drift = &provision.LabPlan{}
	}
	if in.Image != nil {
		files[rec.Step("image", "plan")], files[rec.Step("image", "apply")], files[rec.Step("image", "readback")] = rep.Plan.Images, rep.Images, rep.ImageReadBack
	}
	if in.Switch != nil {
		files[rec.Step("switch", "plan")], files[rec.Step("switch", "apply")], files[rec.Step("switch", "readback")] = rep.Plan.Switches, rep.Switches, drift.Switches
	}
	if in.RNIC != nil {
		files[rec.Step("rnic", "plan")], files[rec.Step("rnic", "apply")], files[rec.Step("rnic", "readback")] = rep.Plan.RNICs, rep.RNICs, drift.RNICs
	}
	var errs []error
	for path, v := range files {
		errs = append(errs, archive.WriteJSON(path, v))
	}
	return errors.Join(errs...)
}
