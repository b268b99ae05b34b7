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
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

func provisionCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "lab", Required: true, Usage: "lab file, generated topology or running lab name"},
		&cli.StringFlag{Name: "rnic-profile", Required: true, Usage: "RNIC profile YAML (trust, pfc_priorities, roce_tos, roce_mode)"},
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

Example profile (rnic.yaml):
   trust: dscp
   pfc_priorities: [3]
   roce_tos: 106        # DSCP 26, ECT(0)
   roce_mode: 2

Examples:
   labctl provision plan   --lab lab.yaml --rnic-profile rnic.yaml
   labctl provision apply  --lab lab.yaml --rnic-profile rnic.yaml
   labctl provision verify --lab lab.yaml --rnic-profile rnic.yaml --json`,
		Subcommands: []*cli.Command{
			cmd("plan", "show what would change", func(c *cli.Context, env *provEnv) error {
				plan, err := provision.PlanRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
				if err != nil {
					return err
				}
				return printChanges(c.Bool("json"), plan.Changes, "no changes: the lab matches the profile")
			}),
			cmd("apply", "make the planned changes and read back", func(c *cli.Context, env *provEnv) error {
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
				drift, err := provision.VerifyRNIC(c.Context, env.pool, env.lab, env.prof, env.progress)
				if perr := printChanges(c.Bool("json"), drift, "ok: the lab matches the profile"); perr != nil {
					return perr
				}
				if errors.Is(err, provision.ErrDrift) {
					return exitError{1, err}
				}
				return err
			}),
		},
	}
}

type provEnv struct {
	lab      *inventory.Lab
	pool     *sshdrv.Pool
	prof     *connectx.Profile
	progress provision.Progress
	close    func()
}

func openProv(c *cli.Context) (*provEnv, error) {
	prof, err := connectx.LoadProfile(c.String("rnic-profile"))
	if err != nil {
		return nil, err
	}
	logger := newLogger(false)
	lab, closeLab, err := openLab(c.Context, c.String("lab"), scenarios.Emulation{}, logger)
	if err != nil {
		return nil, err
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: logger})
	env := &provEnv{lab: lab, pool: pool, prof: prof, close: func() { pool.Close(); closeLab() }}
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
