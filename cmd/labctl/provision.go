package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

func provisionCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "lab", Required: true, Usage: "running lab name ('labctl lab up'), its exported lab file, or a hardware lab file"},
		&cli.StringFlag{Name: "rnic-profile", Usage: "RNIC profile YAML (trust, PFC, DSCP map, buffers, RoCE ToS/mode, CNP, ECN/DCQCN), set over SSH"},
		&cli.StringFlag{Name: "switch-profile", Usage: "switch QoS profile YAML (PFC, thresholds or alpha, headroom, pools, ECN, DSCP map, scheduler), set over NETCONF or the SDE shell as the lab says"},
		&cli.StringFlag{Name: "image", Usage: "switch image bundle every switch must run (see 'labctl image'); apply pushes and activates it first"},
		newFormatFlag(formatTable), jsonAlias,
	}
	applyFlags := append([]cli.Flag{
		&cli.BoolFlag{Name: "atomic", Usage: "if one switch fails to take the profile, roll every switch back (all keep their previous config)"},
	}, flags...)
	cmd := func(name, usage string, fl []cli.Flag, s func(c *cli.Context, env *provEnv) error) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: fl, Action: func(c *cli.Context) error {
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
its settings only while it is up, so --lab names one started with 'labctl lab
up' (by the name it was started with, or its exported lab file); an emulated
lab or topology that is not up is refused ("lab X is not up"), never started
for the one command. docs/provisioning.md explains every field.

Switches are set by the driver the lab names (qos_driver): netconf (default;
candidate, validate, confirmed commit confirmed after read-back) or sde (a
bfrt_python script run by the SDE shell; read back; on failure the previous
state is written back and read back). Without --atomic a switch that fails
keeps its previous config while the others take the new one; with --atomic
every switch keeps its previous config. Interrupting apply (Ctrl-C) rolls
back every switch it had staged.

Example switch profile (qos.yaml):
   pfc_priorities: [3]              # lossless: PFC on, no drop
   xoff_bytes: 524288               # static PFC thresholds ...
   xon_bytes: 393216
   # pfc_alpha: 0.125               # ... or a dynamic one (1/64 .. 4)
   headroom_bytes: 65536
   buffer_pools: {lossless: 4194304, lossy: 6291456}
   dscp_to_tc: {26: 3, 48: 6, 10: off}   # off: remove the entry
   scheduler: dwrr                  # or strict
   dwrr_weights: {0: 1, 3: 4}
   ecn:                             # per queue
     3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}
     5: off                         # no marking on queue 5

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
			cmd("plan", "show what would change", flags, func(c *cli.Context, env *provEnv) error {
				p, err := provision.Plan(c.Context, env.pool, env.lab, env.in, env.progress)
				if err != nil {
					return err
				}
				return env.printPlan(p, "no changes: the lab matches the profiles")
			}),
			cmd("apply", "make the planned changes and read back", applyFlags, func(c *cli.Context, env *provEnv) error {
				env.in.Atomic = c.Bool("atomic")
				rep, err := provision.Apply(c.Context, env.pool, env.lab, env.in, env.progress)
				if env.format != formatTable { // the report, whatever happened
					if perr := printResult(os.Stdout, env.format, rep, func() table { return applyTable(rep) }, nil); perr != nil {
						return errors.Join(err, perr)
					}
					return err
				}
				if perr := env.printReport(rep); perr != nil {
					return errors.Join(err, perr)
				}
				if err != nil { // the details are printed above
					return exitError{1, fmt.Errorf("provision apply failed: %s", failures(rep))}
				}
				return nil
			}),
			cmd("verify", "read back and exit 1 on drift", flags, func(c *cli.Context, env *provEnv) error {
				p, err := provision.Verify(c.Context, env.pool, env.lab, env.in, env.progress)
				if err != nil && !errors.Is(err, provision.ErrDrift) {
					return err
				}
				if perr := env.printPlan(p, "ok: the lab matches the profiles"); perr != nil {
					return perr
				}
				if err != nil {
					return exitError{1, err}
				}
				return nil
			}),
		},
	}
}

type provEnv struct {
	format   string
	lab      *inventory.Lab
	pool     *sshdrv.Pool
	in       provision.Intent
	progress provision.Progress
	close    func()
}

func openProv(c *cli.Context) (*provEnv, error) {
	if c.String("rnic-profile") == "" && c.String("switch-profile") == "" && c.String("image") == "" {
		return nil, exitError{2, fmt.Errorf("give --image, --switch-profile, --rnic-profile or several")}
	}
	format, err := checkFormat(c)
	if err != nil {
		return nil, err
	}
	in, err := provision.LoadIntent(c.String("image"), c.String("switch-profile"), c.String("rnic-profile"))
	if err != nil {
		return nil, err
	}
	logger := newLogger(false)
	lab, err := openUpLab(c.String("lab"))
	if err != nil {
		in.Close()
		return nil, err
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: logger})
	env := &provEnv{format: format, lab: lab, pool: pool, in: in, close: func() { in.Close(); pool.Close() }}
	if isTerminal(os.Stderr) && format == formatTable {
		env.progress = newTermProgress(os.Stderr).Devices
	}
	return env, nil
}

// printPlan prints what differs: the image part if an image is managed,
// the device table (or none) if a profile is.
func (env *provEnv) printPlan(p *provision.LabPlan, none string) error {
	if env.format != formatTable {
		return printResult(os.Stdout, env.format, p, func() table {
			t := changeTable(p.Images, provision.DeviceChanges(p.Switches, p.RNICs), "NOW", "WANTED")
			for _, n := range p.Notes {
				t.Foot = append(t.Foot, fmt.Sprintf("note: %s %s: %s", n.Device, n.Where, n.Text))
			}
			return t
		}, nil)
	}
	if err := printImageChanges(p.Image, p.Images); err != nil {
		return err
	}
	if env.in.Switch != nil || env.in.RNIC != nil {
		if err := printRows("NOW\tWANTED", provision.DeviceChanges(p.Switches, p.RNICs), none, "changes"); err != nil {
			return err
		}
	}
	printNotes(p.Notes)
	return nil
}

// printRows prints device differences under the given last two column
// headings, or none if there are none.
func printRows(heads string, rows []provision.DeviceChange, none, what string) error {
	if len(rows) == 0 {
		if none != "" {
			fmt.Println(none)
		}
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tVIA\tWHERE\tSETTING\t"+heads)
	sw := 0
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Device, r.Via, r.Where, r.Setting, r.From, r.To)
		if r.Via != provision.ViaSSH {
			sw++
		}
	}
	fmt.Fprintf(tw, "%d %s (%d on switches, %d on RNICs)\n", len(rows), what, sw, len(rows)-sw)
	return tw.Flush()
}

func printNotes(notes []provision.Note) {
	for _, n := range notes {
		where := n.Device
		if n.Where != "" {
			where += " " + n.Where
		}
		fmt.Printf("note: %s: %s\n", where, n.Text)
	}
}

// printReport prints what an apply did: each stage's results, the
// read-back if anything still differs, failures and notes, each once.
func (env *provEnv) printReport(rep *provision.Report) error {
	if err := printImageResults(rep.Images); err != nil {
		return err
	}
	if len(rep.Switches) > 0 {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SWITCH\tVIA\tOUTCOME\tERROR")
		for _, r := range rep.Switches {
			outcome := r.Outcome
			if r.Restored {
				outcome += " (restored)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Switch, r.Driver, outcome, firstLine(r.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if env.in.RNIC != nil {
		if err := printRows("WAS\tSET TO", provision.DeviceChanges(nil, rep.RNICs), "RNICs: nothing changed", "changes made"); err != nil {
			return err
		}
	}
	if rep.Drift.Len() > 0 {
		fmt.Println("read back after apply, still different:")
		if len(rep.Drift.Images) > 0 {
			if err := printImageChanges(rep.Drift.Image, rep.Drift.Images); err != nil {
				return err
			}
		}
		if err := printRows("NOW\tWANTED", provision.DeviceChanges(rep.Drift.Switches, rep.Drift.RNICs), "", "settings differ"); err != nil {
			return err
		}
	}
	printNotes(rep.Plan.Notes)
	for _, e := range rep.Errors {
		fmt.Println("error:", e)
	}
	for _, n := range rep.Notes {
		fmt.Println("note:", n)
	}
	return nil
}

// changeTable is a plan's image and device changes as one table (md).
func changeTable(images []provision.ImageChange, rows []provision.DeviceChange, from, to string) table {
	t := table{Head: []string{"DEVICE", "VIA", "WHERE", "SETTING", from, to}}
	for _, x := range images {
		t.add(x.Switch, "image", "", "image", orDash(x.From), x.To)
	}
	for _, r := range rows {
		t.add(r.Device, r.Via, r.Where, r.Setting, r.From, r.To)
	}
	return t
}

// applyTable is what an apply did (md): each switch's and image's
// outcome, then the RNIC changes it made; errors and notes below.
func applyTable(rep *provision.Report) table {
	t := table{Head: []string{"DEVICE", "VIA", "OUTCOME", "DETAIL"}}
	for _, r := range rep.Images {
		t.add(r.Switch, "image "+orDash(r.Image), r.Outcome, r.Error)
	}
	for _, r := range rep.Switches {
		outcome := r.Outcome
		if r.Restored {
			outcome += " (restored)"
		}
		t.add(r.Switch, r.Driver, outcome, firstLine(r.Error))
	}
	for _, r := range provision.DeviceChanges(nil, rep.RNICs) {
		t.add(r.Device, r.Via, "set", r.Where+" "+r.Setting+": "+r.From+" -> "+r.To)
	}
	for _, e := range rep.Errors {
		t.Foot = append(t.Foot, "error: "+e)
	}
	for _, n := range rep.Notes {
		t.Foot = append(t.Foot, "note: "+n)
	}
	return t
}

// failures counts what went wrong in an apply, for its one-line error.
func failures(rep *provision.Report) string {
	n := 0
	for _, r := range rep.Images {
		if r.Error != "" {
			n++
		}
	}
	for _, r := range rep.Switches {
		if r.Error != "" && r.Outcome != provision.NotStarted {
			n++
		}
	}
	return fmt.Sprintf("%d problems, listed above", n+len(rep.Errors))
}
