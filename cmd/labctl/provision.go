package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

func provisionCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "lab", Required: true, Usage: "lab file, generated topology or running lab name"},
		&cli.StringFlag{Name: "rnic-profile", Usage: "RNIC profile YAML (trust, pfc_priorities, roce_tos, roce_mode)"},
		&cli.StringFlag{Name: "switch-profile", Usage: "switch QoS profile YAML (pfc_priorities, xoff_bytes, xon_bytes, ecn per queue), set over NETCONF"},
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
		Description: `plan reads every host's RNIC settings and prints what differs from the profile,
changing nothing; apply makes exactly those changes (hosts in parallel) and reads
back; verify reads back and exits 1 if anything differs. After apply, a second
plan is empty. An emulated lab keeps its settings only while it is up, so use
'labctl lab up' for a plan/apply/verify sequence on one.

Example RNIC profile (rnic.yaml):
   trust: dscp
   pfc_priorities: [3]
   roce_tos: 106        # DSCP 26, ECT(0)
   roce_mode: 2
   ecn:                 # OFED sysfs /sys/class/net/<if>/ecn
     priorities: [3]    # notification and reaction point on, others off
     rp: {rpg_time_reset: 300, rpg_ai_rate: 5}
     np: {min_time_between_cnps: 4, cnp_dscp: 48}

Example switch profile (qos.yaml), applied over NETCONF with a confirmed commit
that is confirmed only after read-back; without --atomic a switch that fails
keeps its previous config while the others take the new one:
   pfc_priorities: [3]
   xoff_bytes: 524288
   xon_bytes: 393216
   ecn:
     3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}

Examples:
   labctl provision plan   --lab lab.yaml --rnic-profile rnic.yaml
   labctl provision apply  --lab lab.yaml --rnic-profile rnic.yaml
   labctl provision verify --lab lab.yaml --rnic-profile rnic.yaml --json
   labctl provision apply  --lab lab.yaml --image drill-lb-1.0.0.tar.gz --switch-profile qos.yaml`,
		Subcommands: []*cli.Command{
			cmd("plan", "show what would change", func(c *cli.Context, env *provEnv) error {
				if _, err := env.img.plan(c, env.progress); err != nil || env.prof == nil && env.qos == nil {
					return err
				}
				sw, rn, err := env.plan(c)
				if err != nil {
					return err
				}
				return env.print(c, sw, rn, "no changes: the lab matches the profiles")
			}),
			cmd("apply", "make the planned changes and read back", func(c *cli.Context, env *provEnv) error {
				if err := env.img.apply(c, env.progress); err != nil {
					return err // no profile goes on switches whose image did not start
				}
				if env.qos != nil {
					rs, err := provision.ApplyQoS(c.Context, env.pool, env.lab, env.qos, c.Bool("atomic"))
					if perr := printSwitchResults(c.Bool("json"), rs); perr != nil {
						return perr
					}
					if err != nil {
						return fmt.Errorf("switch QoS: %w", err)
					}
				}
				if env.prof == nil {
					return nil
				}
				plan, err := provision.PlanRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
				if err != nil {
					return err
				}
				applied, err := provision.ApplyRNIC(c.Context, env.pool, env.lab, plan, env.progress)
				if perr := printChanges(c.Bool("json"), applied, "nothing to change"); perr != nil {
					return perr
				}
				if err != nil {
					return fmt.Errorf("applied %d of %d changes: %w", len(applied), len(plan.Changes), err)
				}
				if drift, err := provision.VerifyRNIC(c.Context, env.pool, env.lab, env.prof, nil); err != nil {
					_ = printChanges(false, drift, "")
					return fmt.Errorf("read-back after apply: %w", err)
				}
				return nil
			}),
			cmd("verify", "read back and exit 1 on drift", func(c *cli.Context, env *provEnv) error {
				ni, err := env.img.plan(c, env.progress)
				if err != nil {
					return err
				}
				var sw []provision.SwitchChange
				var rn []connectx.Change
				if env.prof != nil || env.qos != nil {
					if sw, rn, err = env.plan(c); err != nil {
						return err
					}
					if perr := env.print(c, sw, rn, "ok: the lab matches the profiles"); perr != nil {
						return perr
					}
				}
				if n := len(sw) + len(rn) + ni; n > 0 {
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

func printChanges(asJSON bool, ch []connectx.Change, none string) error {
	if asJSON {
		if ch == nil {
			ch = []connectx.Change{}
		}
		return json.NewEncoder(os.Stdout).Encode(ch)
	}
	if len(ch) == 0 {
		if none != "" {
			fmt.Println(none)
		}
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tDEVICE\tSETTING\tNOW\tWANTED")
	for _, c := range ch {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Host, c.Device, c.Field, c.From, c.To)
	}
	fmt.Fprintf(tw, "%d changes\n", len(ch))
	return tw.Flush()
}

// plan diffs the managed devices against their profiles.
func (env *provEnv) plan(c *cli.Context) ([]provision.SwitchChange, []connectx.Change, error) {
	var sw []provision.SwitchChange
	var rn []connectx.Change
	if env.qos != nil {
		var err error
		if sw, err = provision.PlanQoS(c.Context, env.pool, env.lab, env.qos); err != nil {
			return nil, nil, err
		}
	}
	if env.prof != nil {
		p, err := provision.PlanRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
		if err != nil {
			return nil, nil, err
		}
		rn = p.Changes
	}
	return sw, rn, nil
}

func (env *provEnv) print(c *cli.Context, sw []provision.SwitchChange, rn []connectx.Change, none string) error {
	if c.Bool("json") {
		if sw == nil {
			sw = []provision.SwitchChange{}
		}
		if rn == nil {
			rn = []connectx.Change{}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"switches": sw, "rnics": rn})
	}
	if len(sw)+len(rn) == 0 {
		fmt.Println(none)
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	if len(sw) > 0 {
		fmt.Fprintln(tw, "SWITCH\tSETTING\tNOW\tWANTED")
		for _, s := range sw {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Switch, s.Field, s.From, s.To)
		}
		fmt.Fprintf(tw, "%d switch changes\n\n", len(sw))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rn) > 0 {
		return printChanges(false, rn, "")
	}
	return nil
}

func printSwitchResults(asJSON bool, rs []provision.SwitchResult) error {
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(rs)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tOUTCOME\tERROR")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Switch, r.Outcome, r.Error)
	}
	return tw.Flush()
}
