package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// Intent is what a lab's devices must hold; a nil part is not managed.
type Intent struct {
	Image  *tofino.Bundle    // the image every switch runs
	Switch *QoSProfile       // switch QoS, through each switch's driver
	RNIC   *connectx.Profile // every host's RNICs
	Atomic bool              // switch QoS goes on every switch or on none (see ApplySwitches)
}

// LoadIntent reads the files an intent names; "" leaves that part
// unmanaged. The image bundle is opened and validated; Close the intent
// to remove what opening it unpacked.
func LoadIntent(image, switchProfile, rnicProfile string) (Intent, error) {
	var in Intent
	var err error
	if switchProfile != "" {
		if in.Switch, err = LoadQoSProfile(switchProfile); err != nil {
			return in, err
		}
	}
	if rnicProfile != "" {
		if in.RNIC, err = connectx.LoadProfile(rnicProfile); err != nil {
			return in, err
		}
	}
	if image != "" {
		b, err := tofino.OpenBundle(image)
		if err != nil {
			return in, err
		}
		if err := b.Validate(); err != nil {
			b.Close()
			return in, fmt.Errorf("image %s is not valid:\n%w", image, err)
		}
		in.Image = b
	}
	return in, nil
}

// Close removes what opening the intent's image unpacked.
func (in Intent) Close() error {
	if in.Image == nil {
		return nil
	}
	return in.Image.Close()
}

// LabPlan is what differs between a lab and an intent, device by device,
// and notes on what is not a change.
type LabPlan struct {
	Image    string            `json:"image,omitempty"` // the image every switch must run
	Images   []ImageChange     `json:"images,omitempty"`
	Switches []SwitchChange    `json:"switches"`
	RNICs    []connectx.Change `json:"rnics"`
	Notes    []Note            `json:"notes,omitempty"`

	images []tofino.Status // the image read it comes from
	rnic   *RNICPlan
}

// Len is the number of differences (0 for a nil plan).
func (p *LabPlan) Len() int {
	if p == nil {
		return 0
	}
	return len(p.Images) + len(p.Switches) + len(p.RNICs)
}

// Report is what an apply did: the plan it started from, every device's
// result, what still differs when everything was read back afterwards,
// and notes on what it did not do and why.
type Report struct {
	Plan     *LabPlan          `json:"plan"`
	Images   []tofino.Result   `json:"images,omitempty"`
	Switches []SwitchResult    `json:"switches"`
	RNICs    []connectx.Change `json:"rnics"` // the changes made
	// ImageReadBack is every switch's image status after the apply.
	ImageReadBack []tofino.Status `json:"image_readback,omitempty"`
	// Drift is the read-back after the apply: what still differs (nil
	// when it was not read back).
	Drift *LabPlan `json:"drift,omitempty"`
	// Errors are the failures no device result above holds (a device
	// that could not be read, an RNIC host that failed, an interruption),
	// one each.
	Errors []string `json:"errors,omitempty"`
	// Notes say what the apply did not do, and why.
	Notes []string `json:"notes,omitempty"`
}

// addErrors records err's parts in r.Errors.
func (r *Report) addErrors(err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			r.addErrors(e)
		}
		return
	}
	r.Errors = append(r.Errors, err.Error())
}

// Plan reads every managed device and diffs it against the intent; it
// changes nothing. A device that cannot be read is an error naming it;
// the plan still holds every device that could.
func Plan(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, in Intent, progress Progress) (*LabPlan, error) {
	p := &LabPlan{Switches: []SwitchChange{}, RNICs: []connectx.Change{}}
	var errs []error
	if in.Image != nil {
		p.Image = in.Image.Manifest.Ref()
		ss, err := readImages(ctx, tofino.NewDriver(pool, lab), lab, progress)
		p.images, p.Images = ss, imageDrift(ss, p.Image)
		errs = append(errs, err)
	}
	if in.Switch != nil {
		sp, err := PlanSwitches(ctx, pool, lab, in.Switch, progress)
		p.Switches, p.Notes = sp.Changes, append(p.Notes, sp.Notes...)
		errs = append(errs, err)
	}
	if in.RNIC != nil {
		rp, err := PlanRNIC(ctx, pool, lab, in.RNIC, progress)
		p.rnic, p.RNICs, p.Notes = rp, rp.Changes, append(p.Notes, rp.Notes...)
		errs = append(errs, err)
	}
	return p, errors.Join(errs...)
}

// Verify is Plan that fails with ErrDrift when anything differs.
func Verify(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, in Intent, progress Progress) (*LabPlan, error) {
	p, err := Plan(ctx, pool, lab, in, progress)
	if err == nil && p.Len() > 0 {
		err = fmt.Errorf("%d settings: %w", p.Len(), ErrDrift)
	}
	return p, err
}

// Apply makes a lab hold an intent: it plans, activates the image, sets
// the switches' QoS, then the RNICs, each only where something differs,
// and reads every managed device back. A stage that fails stops the
// stages after it (no profile goes on switches whose image did not
// start), and the report's notes say so. The report is complete whatever
// happens; the error joins every failure and wraps ErrDrift if the
// read-back still differs.
func Apply(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, in Intent, progress Progress) (*Report, error) {
	rep := &Report{Switches: []SwitchResult{}, RNICs: []connectx.Change{}}
	plan, err := Plan(ctx, pool, lab, in, progress)
	rep.Plan = plan
	if err != nil {
		rep.addErrors(err)
		rep.Notes = append(rep.Notes, "nothing applied: the plan could not read every device")
		return rep, fmt.Errorf("plan: %w", err)
	}
	var errs []error
	stopped := func(what string) bool {
		switch {
		case ctx.Err() != nil:
			rep.Notes = append(rep.Notes, what+" not applied: interrupted")
		case len(errs) > 0:
			rep.Notes = append(rep.Notes, what+" not applied: an earlier stage failed")
		default:
			return false
		}
		return true
	}
	if in.Image != nil && len(plan.Images) > 0 && !stopped("image") {
		rs, err := applyImage(ctx, tofino.NewDriver(pool, lab), lab, in.Image, progress)
		rep.Images = rs
		if err != nil {
			errs = append(errs, err)
		}
		if reset := SDEReset(lab, rs); len(reset) > 0 && in.Switch == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("bf_switchd restarted on %s (qos_driver: sde): their SDE QoS tables are back at their defaults; "+
				"apply a switch profile to set them again", strings.Join(reset, ", ")))
		}
	}
	// An image start may have reset a switch's QoS: read it again then.
	if in.Switch != nil && (len(plan.Switches) > 0 || len(rep.Images) > 0) && !stopped("switch QoS") {
		rs, err := ApplySwitches(ctx, pool, lab, in.Switch, in.Atomic, progress)
		rep.Switches = rs
		if err != nil {
			errs = append(errs, fmt.Errorf("switch QoS: %w", err))
		}
	}
	if in.RNIC != nil && len(plan.RNICs) > 0 && !stopped("RNIC profile") {
		applied, err := ApplyRNIC(ctx, pool, lab, plan.rnic, progress)
		rep.RNICs = append(rep.RNICs, applied...)
		rep.addErrors(err)
		if err != nil {
			errs = append(errs, fmt.Errorf("RNICs: applied %d of %d changes: %w", len(applied), len(plan.RNICs), err))
		}
	}
	if err := ctx.Err(); err != nil {
		err = fmt.Errorf("interrupted: %w", err)
		rep.addErrors(err)
		rep.Notes = append(rep.Notes, "not read back: interrupted (the results say what each device did)")
		return rep, errors.Join(append(errs, err)...)
	}
	drift, err := Plan(ctx, pool, lab, in, progress)
	rep.Drift, rep.ImageReadBack = drift, drift.images
	switch {
	case err != nil:
		err = fmt.Errorf("read-back: %w", err)
		rep.addErrors(err)
		errs = append(errs, err)
	case drift.Len() > 0:
		err = fmt.Errorf("read-back after apply: %d settings differ: %w", drift.Len(), ErrDrift)
		rep.addErrors(err)
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}
