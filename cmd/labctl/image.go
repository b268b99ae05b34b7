package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

func imageCommand() *cli.Command {
	onLab := []cli.Flag{
		&cli.StringFlag{Name: "lab", Required: true, Usage: "running lab name ('labctl lab up'), its exported lab file, or a hardware lab file"},
		&cli.StringSliceFlag{Name: "switch", Usage: "only these switches (repeat the flag or separate with commas)"},
		&cli.StringFlag{Name: "sde-install", Value: "/opt/bf-sde/install", Usage: "$SDE_INSTALL on the switches"},
		&cli.DurationFlag{Name: "health-timeout", Usage: "wait this long for a started program to load (default 2m; 3s on an emulated lab)"},
		newFormatFlag(formatTable), jsonAlias,
	}
	return &cli.Command{
		Name:  "image",
		Usage: "validate, push and activate switch program images; roll back; show what runs",
		Description: `An image is a bundle (a directory or a .tar.gz) holding image.yaml and the P4
compiler's artifacts:
   image.yaml            name, version, target, program, lb scheme, files with sha256
   bf-rt.json            (or bfrt.json)
   pipe/context.json
   pipe/tofino.bin       (pipe/tofino2.bin for target tofino2)
   <program>.conf        bf_switchd's conf, naming the artifacts relative to the bundle
See drivers/tofino/testdata/example-bundle and docs/images.md.

push copies an image to every switch into /opt/labctl/images/<name>/<version>
and checks it there with sha256sum. Images are immutable: pushing the same
name@version with other content is refused. activate stops bf_switchd, starts
it with the image and waits until the program is loaded and the ports are up;
a switch where that fails goes back to the image it ran before, and the
failure and the rollback are both reported (exit 1). rollback makes the
previous image active again. status shows each switch's active and previous
image, its health and its last attempt. An emulated lab keeps images only
while it is up, so --lab names one started with 'labctl lab up'; one that is
not up is refused, never started for the one command.

A bf_switchd start is a cold start: it resets the traffic manager's tables
and the program's ECN/DSCP tables, so switch QoS set through the SDE shell
(qos_driver: sde) is lost on every switch activate or rollback restarts, and
they say so on stderr. Set it again with 'labctl provision apply
--switch-profile F', or give --image and --switch-profile together to
'provision apply', which starts the image first.

Examples:
   labctl image validate drivers/tofino/testdata/example-bundle
   labctl lab up leafspine:1x2:2
   labctl image push     --lab leafspine:1x2:2 drivers/tofino/testdata/example-bundle
   labctl image activate --lab leafspine:1x2:2 drill-lb@1.0.0
   labctl image status   --lab leafspine:1x2:2 --json
   labctl image rollback --lab leafspine:1x2:2 --switch leaf1`,
		Subcommands: []*cli.Command{
			{
				Name: "validate", Usage: "check a bundle: files and sha256s, manifest, conf", ArgsUsage: "BUNDLE",
				Flags: []cli.Flag{newFormatFlag(formatTable), jsonAlias},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return exitError{2, errors.New("image validate needs one BUNDLE (a directory or .tar.gz)")}
					}
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					return validateImage(c.Args().First(), format)
				},
			},
			{
				Name: "schemes", Usage: "list the load-balancing schemes an image's lb.scheme may name, with their parameters",
				Flags: []cli.Flag{newFormatFlag(formatTable), jsonAlias, &cli.BoolFlag{Name: "host",
					Usage: "list the host modules an RNIC profile's host_lb (or a scenario's emulation.host_lb) may name instead"}},
				Action: func(c *cli.Context) error {
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					return listSchemes(os.Stdout, format, c.Bool("host"))
				},
			},
			{
				Name: "push", Usage: "copy a bundle to the switches and verify it there", ArgsUsage: "BUNDLE", Flags: onLab,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return exitError{2, errors.New("image push needs one BUNDLE")}
					}
					b, err := tofino.OpenBundle(c.Args().First())
					if err != nil {
						return err
					}
					defer b.Close()
					return withImages(c, func(env *imageEnv) error {
						rs, err := env.drv.Push(c.Context, env.ts, b, env.progress)
						return printResults(env.format, rs, err)
					})
				},
			},
			{
				Name: "activate", Usage: "run a pushed image; roll back a switch where it fails", ArgsUsage: "NAME@VERSION", Flags: onLab,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return exitError{2, errors.New("image activate needs one NAME@VERSION (e.g. drill-lb@1.0.0)")}
					}
					ref := c.Args().First()
					if _, _, err := tofino.ParseRef(ref); err != nil {
						return exitError{2, err}
					}
					return withImages(c, func(env *imageEnv) error {
						rs, err := env.drv.Activate(c.Context, env.ts, ref, env.progress)
						noteSDEReset(c.String("lab"), env.lab, rs)
						return printResults(env.format, rs, err)
					})
				},
			},
			{
				Name: "rollback", Usage: "make each switch's previous image active again", Flags: onLab,
				Action: func(c *cli.Context) error {
					return withImages(c, func(env *imageEnv) error {
						rs, err := env.drv.Rollback(c.Context, env.ts, env.progress)
						noteSDEReset(c.String("lab"), env.lab, rs)
						return printResults(env.format, rs, err)
					})
				},
			},
			{
				Name: "status", Usage: "active and previous image per switch, health, last attempt", Flags: onLab,
				Action: func(c *cli.Context) error {
					return withImages(c, func(env *imageEnv) error {
						ss, err := env.drv.Status(c.Context, env.ts, env.progress)
						if perr := printImageStatus(env.format, ss); perr != nil {
							return perr
						}
						return err
					})
				},
			},
		},
	}
}

type imageEnv struct {
	format   string
	lab      *inventory.Lab
	drv      *tofino.Driver
	ts       []sshdrv.Target
	progress tofino.Progress
}

// withImages opens the lab and runs fn with a driver for its switches.
func withImages(c *cli.Context, fn func(*imageEnv) error) error {
	format, err := checkFormat(c)
	if err != nil {
		return err
	}
	logger := newLogger(false)
	lab, err := openUpLab(c.String("lab"))
	if err != nil {
		return err
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: logger})
	defer pool.Close()
	env := &imageEnv{format: format, lab: lab, drv: tofino.NewDriver(pool, lab)}
	env.drv.SDEInstall, env.drv.Logger = c.String("sde-install"), logger
	if d := c.Duration("health-timeout"); d > 0 {
		env.drv.HealthTimeout = d
	}
	if env.ts, err = tofino.Targets(lab, c.StringSlice("switch")); err != nil {
		return exitError{2, err}
	}
	if isTerminal(os.Stderr) && format == formatTable {
		env.progress = newTermProgress(os.Stderr).Devices
	}
	return fn(env)
}

func validateImage(src, format string) error {
	reg, err := schemes.Registry()
	if err != nil {
		return err
	}
	b, err := tofino.OpenBundle(src)
	if err == nil {
		defer b.Close()
		err = b.Validate(schemeCheck(reg))
	}
	if err != nil && format == formatTable {
		return exitError{1, err}
	}
	out := map[string]any{"bundle": src, "valid": err == nil}
	if b != nil {
		out["image"] = b.Manifest
	}
	var problems []yamlpos.Problem
	if err != nil {
		var ps yamlpos.Problems
		if errors.As(err, &ps) {
			problems = ps
		} else {
			problems = []yamlpos.Problem{{Msg: err.Error()}}
		}
		out["problems"] = problems
	}
	scheme := ""
	if b != nil {
		m := b.Manifest
		scheme = m.LB.Scheme
		for _, k := range slices.Sorted(maps.Keys(m.LB.Params)) {
			scheme += " " + k + "=" + m.LB.Params[k]
		}
	}
	perr := printResult(os.Stdout, format, out, func() table {
		t := table{Head: []string{"BUNDLE", "IMAGE", "TARGET", "PROGRAM", "LB", "FILES", "VALID"}}
		if b == nil {
			t.add(src, "-", "-", "-", "-", "-", "false")
		} else {
			m := b.Manifest
			t.add(src, m.Ref(), m.Target, m.Program, scheme, strconv.Itoa(len(m.Files)), strconv.FormatBool(err == nil))
		}
		for _, p := range problems {
			t.Foot = append(t.Foot, "problem: "+p.String())
		}
		return t
	}, func(w io.Writer) error {
		m := b.Manifest
		_, err := fmt.Fprintf(w, "ok: %s (%s, program %s, lb %s, %d files)\n", m.Ref(), m.Target, m.Program, scheme, len(m.Files))
		return err
	})
	if err != nil {
		return exitError{1, err}
	}
	return perr
}

// listSchemes prints every scheme of the fabric twin's registry (host:
// its host module registry) with its parameters: default, unit, allowed
// values and help.
func listSchemes(w io.Writer, format string, host bool) error {
	reg, err := schemes.Registry()
	if err != nil {
		return err
	}
	hosts, err := hostschemes.Registry()
	if err != nil {
		return err
	}
	names, info := reg.Names(), func(n string) (string, []lb.Param) { s, _ := reg.Scheme(n); return s.Help, s.Params }
	if host {
		names, info = hosts.Names(), func(n string) (string, []lb.Param) { s, _ := hosts.Scheme(n); return s.Help, s.Params }
	}
	type param struct {
		Name, Default, Unit, Rule, Help string
	}
	type scheme struct {
		Name, Help string
		Params     []param
	}
	var out []scheme
	for _, n := range names {
		help, params := info(n)
		sc := scheme{Name: n, Help: help, Params: []param{}}
		for _, p := range params {
			sc.Params = append(sc.Params, param{p.Name, p.Default, p.Unit, p.Rule(), p.Help})
		}
		out = append(out, sc)
	}
	return printResult(w, format, out, func() table {
		t := table{Head: []string{"SCHEME", "PARAMETER", "DEFAULT", "UNIT", "VALUES", "HELP"}}
		for _, s := range out {
			t.add(s.Name, "", "", "", "", s.Help)
			for _, p := range s.Params {
				t.add("", p.Name, p.Default, p.Unit, p.Rule, p.Help)
			}
		}
		return t
	}, nil)
}

// schemeCheck validates a scheme against the fabric twin's modules: an
// image's against the switch registry, an RNIC profile's host_lb against
// the host module registry.
func schemeCheck(reg interface {
	Problems(name string, params map[string]string) []*lb.ParamError
}) tofino.SchemeCheck {
	return func(scheme string, params map[string]string) []tofino.SchemeProblem {
		var out []tofino.SchemeProblem
		for _, p := range reg.Problems(scheme, params) {
			out = append(out, tofino.SchemeProblem{Param: p.Param, Msg: p.Msg})
		}
		return out
	}
}

// noteSDEReset says on stderr which switches lost the QoS set through the
// SDE shell: those whose bf_switchd was restarted. labArg is the lab as the
// user named it.
func noteSDEReset(labArg string, lab *inventory.Lab, rs []tofino.Result) {
	if reset := provision.SDEReset(lab, rs); len(reset) > 0 {
		fmt.Fprintf(os.Stderr, "note: bf_switchd restarted on %s (qos_driver: sde): their SDE QoS tables are back at their defaults; "+
			"set the switch profile again (labctl provision apply --lab %s --switch-profile F)\n", strings.Join(reset, ", "), labArg)
	}
}

// printResults prints per-switch results; err (any switch failing) makes
// the exit status 1 after the table.
func printResults(format string, rs []tofino.Result, err error) error {
	if rs == nil {
		rs = []tofino.Result{}
	}
	if perr := printResult(os.Stdout, format, rs, func() table { return imageResults(rs) }, func(w io.Writer) error {
		if len(rs) == 0 {
			return nil
		}
		return imageResults(rs).aligned(w)
	}); perr != nil {
		return perr
	}
	if err != nil {
		return exitError{1, fmt.Errorf("%d of %d switches failed:\n%w", failed(rs), len(rs), err)}
	}
	return nil
}

// printImageResults prints what each switch did with an image.
func printImageResults(rs []tofino.Result) error {
	if len(rs) == 0 {
		return nil
	}
	return imageResults(rs).aligned(os.Stdout)
}

func imageResults(rs []tofino.Result) table {
	t := table{Head: []string{"SWITCH", "IMAGE", "OUTCOME", "DETAIL"}}
	for _, r := range rs {
		detail := r.Error
		if r.Rollback != "" {
			detail += " -- rollback: " + r.Rollback
		}
		t.add(r.Switch, orDash(r.Image), r.Outcome, detail)
	}
	return t
}

func failed(rs []tofino.Result) int {
	n := 0
	for _, r := range rs {
		if r.Error != "" {
			n++
		}
	}
	return n
}

func printImageStatus(format string, ss []tofino.Status) error {
	if ss == nil {
		ss = []tofino.Status{}
	}
	return printResult(os.Stdout, format, ss, func() table {
		t := table{Head: []string{"SWITCH", "ACTIVE", "PREVIOUS", "HEALTH", "LAST ATTEMPT"}}
		for _, s := range ss {
			health := "-"
			switch {
			case s.Error != "":
				health = "unknown: " + s.Error
			case s.Health != nil && s.Healthy:
				health = "ok: " + s.Health.Program + " loaded"
			case s.Health != nil:
				health = s.Health.Problem()
			}
			last := "-"
			if a := s.Last; a != nil {
				last = fmt.Sprintf("%s %s: %s (%s)", a.Action, a.Image, a.Outcome, a.At.Local().Format("2006-01-02 15:04:05"))
				if a.Error != "" {
					last += ": " + firstLine(a.Error)
				}
			}
			t.add(s.Switch, orDash(s.Active), orDash(s.Previous), health, last)
		}
		return t
	}, nil)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printImageChanges prints a plan's image part (nothing when the plan
// manages no image).
func printImageChanges(image string, ch []provision.ImageChange) error {
	if image == "" {
		return nil
	}
	if len(ch) == 0 {
		fmt.Printf("every switch runs %s\n", image)
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tACTIVE IMAGE\tWANTED\tWHY")
	for _, x := range ch {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Switch, orDash(x.From), x.To, x.Why)
	}
	fmt.Fprintf(tw, "%d switch images to change\n\n", len(ch))
	return tw.Flush()
}
