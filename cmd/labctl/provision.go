package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

func provisionCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "lab", Required: true, Usage: "lab file, generated topology or running lab name"},
		&cli.StringFlag{Name: "rnic-profile", Usage: "RNIC profile YAML (trust, PFC, DSCP map, buffers, RoCE ToS/mode, CNP, ECN/DCQCN), set over SSH"},
		&cli.StringFlag{Name: "switch-profile", Usage: "switch QoS profile YAML (PFC, thresholds or alpha, headroom, pools, ECN, DSCP map, scheduler), set over NETCONF or the SDE shell as the lab says"},
		&cli.BoolFlag{Name: "atomic", Usage: "apply: if one switch fails, roll every switch back (all keep their previous config)"},
		&cli.StringFlag{Name: "image", Usage: "switch image bundle every switch must run (see 'labctl image'); apply pushes and activates it first"},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
	}
	type step func(c *cli.Context, env *provEnv) error
	cmd := func(name, usage string, s step) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: func(c *cli.Context) error {
			env, err := openProv(c)
			if err != nil {
				return err
			}
			defer env.close()
			return s(c, env)
		}}
	}
	return &cli.Command{
		Name:  "provision",
		Usage: "plan, apply and verify device settings against profiles",
		Description: `plan reads every switch's QoS and every host's RNIC settings and prints one
list of what differs from the profiles, device by device, changing nothing;
apply makes exactly those changes (devices in parallel, with a progress bar on
a terminal), then reads every device back; verify reads back and exits 1 if
anything differs. After apply, a second plan is empty. An emulated lab keeps
its settings only while it is up, so use 'labctl lab up' for a plan/apply/verify
sequence on one. docs/provisioning.md explains every field.

Switches are set by the driver the lab names (qos_driver): netconf (default;
candidate, validate, confirmed commit confirmed after read-back) or sde (a
bfrt_python script run by the SDE shell; read back; on failure the previous
state is written back and read back). Without --atomic a switch that fails
keeps its previous config while the others take the new one; with --atomic
every switch keeps its previous config.

Example switch profile (qos.yaml):
   pfc_priorities: [3]              # lossless: PFC on, no drop
   xoff_bytes: 524288               # static PFC thresholds ...
   xon_bytes: 393216
   # pfc_alpha: 0.125               # ... or a dynamic one (1/64 .. 4)
   headroom_bytes: 65536
   buffer_pools: {lossless: 4194304, lossy: 6291456}
   dscp_to_tc: {26: 3, 48: 6}
   scheduler: dwrr                  # or strict
   dwrr_weights: {0: 1, 3: 4}
   ecn:                             # per queue
     3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}

Example RNIC profile (rnic.yaml):
   trust: dscp
   pfc_priorities: [3]
   dscp2prio: {26: 3}
   roce_tos: 106                    # DSCP 26, ECT(0)
   roce_mode: 2
   cnp_dscp: 48
   cnp_priority: 6
   ecn:                             # OFED sysfs, or debugfs on inbox-driver hosts
     priorities: [3]                # notification and reaction point on, others off (OFED only)
     rp: {rpg_time_reset: 300, rpg_ai_rate: 5}
     np: {min_time_between_cnps: 4}

Examples:
   labctl lab up leafspine:4x4:16@100
   labctl provision plan   --lab leafspine:4x4:16@100 --switch-profile qos.yaml --rnic-profile rnic.yaml
   labctl provision apply  --lab leafspine:4x4:16@100 --switch-profile qos.yaml --rnic-profile rnic.yaml --atomic
   labctl provision verify --lab lab.yaml --switch-profile qos.yaml --rnic-profile rnic.yaml --json
   labctl provision apply  --lab lab.yaml --image drill-lb-1.0.0.tar.gz --switch-profile qos.yaml`,
		Subcommands: []*cli.Command{
			cmd("plan", "show what would change", func(c *cli.Context, env *provEnv) error {
				p, err := env.plan(c)
				if err != nil {
					return err
				}
				return p.print(c.Bool("json"), "no changes: the lab matches the profiles")
			}),
			cmd("apply", "make the planned changes and read back", func(c *cli.Context, env *provEnv) error {
				return env.apply(c)
			}),
			cmd("verify", "read back and exit 1 on drift", func(c *cli.Context, env *provEnv) error {
				p, err := env.plan(c)
				if err != nil {
					return err
				}
				if perr := p.print(c.Bool("json"), "ok: the lab matches the profiles"); perr != nil {
					return perr
				}
				if n := len(p.Images) + len(p.Switches) + len(p.RNICs); n > 0 {
					return exitError{1, fmt.Errorf("%d settings: %w", n, provision.ErrDrift)}
				}
				return nil
			}),
		},
	}
}

type provEnv struct {
	lab      *inventory.Lab
	pool     *sshdrv.Pool
	prof     *connectx.Profile     // nil: RNICs not managed
	qos      *provision.QoSProfile // nil: switches not managed
	img      *imageProv            // nil: images not managed
	progress provision.Progress
	close    func()
}

func openProv(c *cli.Context) (*provEnv, error) {
	if c.String("rnic-profile") == "" && c.String("switch-profile") == "" && c.String("image") == "" {
		return nil, exitError{2, fmt.Errorf("give --image, --switch-profile, --rnic-profile or several")}
	}
	var prof *connectx.Profile
	var qos *provision.QoSProfile
	var err error
	if f := c.String("rnic-profile"); f != "" {
		if prof, err = connectx.LoadProfile(f); err != nil {
			return nil, err
		}
	}
	if f := c.String("switch-profile"); f != "" {
		if qos, err = provision.LoadQoSProfile(f); err != nil {
			return nil, err
		}
	}
	logger := newLogger(false)
	lab, closeLab, err := openLab(c.Context, c.String("lab"), scenarios.Emulation{}, logger)
	if err != nil {
		return nil, err
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: logger})
	img, err := openImageProv(c, lab, pool)
	if err != nil {
		pool.Close()
		closeLab()
		return nil, err
	}
	env := &provEnv{lab: lab, pool: pool, prof: prof, qos: qos, img: img, close: func() { img.close(); pool.Close(); closeLab() }}
	if isTerminal(os.Stderr) && !c.Bool("json") {
		p := newTermProgress(os.Stderr)
		env.progress = p.Devices
	}
	return env, nil
}

// provPlan is what plan and verify print.
type provPlan struct {
	Image    string                   `json:"image,omitempty"` // the image every switch must run
	Images   []provision.ImageChange  `json:"images,omitempty"`
	Switches []provision.SwitchChange `json:"switches"`
	RNICs    []connectx.Change        `json:"rnics"`
	Notes    []provision.Note         `json:"notes,omitempty"`
}

// plan diffs the managed devices against their profiles.
func (env *provEnv) plan(c *cli.Context) (*provPlan, error) {
	p := &provPlan{Switches: []provision.SwitchChange{}, RNICs: []connectx.Change{}}
	if env.img != nil {
		ch, err := env.img.plan(c, env.progress)
		if err != nil {
			return nil, err
		}
		p.Image, p.Images = env.img.b.Manifest.Ref(), ch
	}
	if env.qos != nil {
		sw, err := provision.PlanSwitches(c.Context, env.pool, env.lab, env.qos, env.progress)
		if err != nil {
			return nil, err
		}
		p.Switches = append(p.Switches, sw...)
	}
	if env.prof != nil {
		rn, err := provision.PlanRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
		if err != nil {
			return nil, err
		}
		p.RNICs, p.Notes = append(p.RNICs, rn.Changes...), rn.Notes
	}
	return p, nil
}

func (p *provPlan) print(asJSON bool, none string) error {
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(p)
	}
	if err := printImageChanges(p.Image, p.Images); err != nil {
		return err
	}
	rows := provision.DeviceChanges(p.Switches, p.RNICs)
	if len(rows) == 0 {
		fmt.Println(none)
	} else {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DEVICE\tVIA\tWHERE\tSETTING\tNOW\tWANTED")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Device, r.Via, r.Where, r.Setting, r.From, r.To)
		}
		fmt.Fprintf(tw, "%d changes (%d on switches, %d on RNICs)\n", len(rows), len(p.Switches), len(p.RNICs))
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range p.Notes {
		fmt.Printf("note: %s %s: %s\n", n.Host, n.Device, n.Text)
	}
	return nil
}

// apply starts the image, then sets switches and RNICs, then reads
// everything back. No profile goes on switches whose image did not start.
func (env *provEnv) apply(c *cli.Context) error {
	asJSON := c.Bool("json")
	out := struct {
		Images   []tofino.Result          `json:"images,omitempty"`
		Switches []provision.SwitchResult `json:"switches"`
		RNICs    []connectx.Change        `json:"rnics"`
		Drift    *provPlan                `json:"drift,omitempty"`
	}{nil, []provision.SwitchResult{}, []connectx.Change{}, nil}
	var errs []error
	if env.img != nil {
		rs, err := env.img.apply(c, env.progress)
		out.Images = rs
		if !asJSON {
			_ = printImageResults(rs)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if env.qos != nil && len(errs) == 0 {
		rs, err := provision.ApplySwitches(c.Context, env.pool, env.lab, env.qos, c.Bool("atomic"), env.progress)
		out.Switches = rs
		if !asJSON {
			printSwitchResults(rs)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("switch QoS: %w", err))
		}
	}
	if env.prof != nil && len(errs) == 0 {
		plan, err := provision.PlanRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
		if err != nil {
			return err
		}
		applied, err := provision.ApplyRNIC(c.Context, env.pool, env.lab, plan, env.progress)
		out.RNICs = append(out.RNICs, applied...)
		if !asJSON {
			_ = (&provPlan{RNICs: applied, Notes: plan.Notes}).print(false, "RNICs: nothing to change")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("RNICs: applied %d of %d changes: %w", len(applied), len(plan.Changes), err))
		}
	}
	if len(errs) == 0 {
		drift, err := env.plan(c) // the read-back of everything
		if err != nil {
			return fmt.Errorf("read-back after apply: %w", err)
		}
		if n := len(drift.Images) + len(drift.Switches) + len(drift.RNICs); n > 0 {
			out.Drift = drift
			errs = append(errs, fmt.Errorf("read-back after apply: %d settings: %w", n, provision.ErrDrift))
			if !asJSON {
				_ = drift.print(false, "")
			}
		}
	}
	if asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func printSwitchResults(rs []provision.SwitchResult) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tVIA\tOUTCOME\tERROR")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Switch, r.Driver, r.Outcome, r.Error)
	}
	tw.Flush()
}
