package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
	"github.com/labctl/labctl/scenarios"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a scenario and write its run archive and report",
		ArgsUsage: "SCENARIO",
		Description: `SCENARIO is a scenario YAML file or a built-in name (` + strings.Join(scenarios.Builtin(), ", ") + `).

The lab is, in order: --lab, the scenario's lab:, or the built-in emulated
leaf-spine (` + scenarios.DefaultLab + `). LAB is a lab file, a generated
topology (leafspine:SxL:H[@gbps] or fattree:K[@gbps], with ,delay=5us for
links other than 1 us) or the name of a lab started with 'labctl lab up'. An emulated lab that is not already up is started for the
run (with the scenario's emulation: section) and stopped after it.

A scenario with a matrix: runs once per combination of the swept values
(e.g. emulation.lb x traffic[0].load x traffic[0].cdf, or a field inside a
profile: provision.switch_profile:ecn.3.kmin_bytes), all into one
archive; variants that change lab: or emulation: get their own lab, the
others share one. A point that fails is recorded and the run goes on.

Traffic patterns (fields in the scenario's traffic: entries):
` + scenarios.PatternHelp() + `
The run's stages, in order, as its progress and manifest.json name them (a
run skips those it has no use for):
` + scenarios.StageHelp() + `
It writes OUT/<run-id>/: manifest.json, plan.json, raw/, flows.csv,
telemetry/*.lp (switch port/queue counters, RNIC hw counters), summary.json,
report.html. On a terminal it shows progress (point i/n with an ETA);
otherwise it prints progress as JSON lines on stderr ({"stage":...},
{"point":...,"index":i,"total":n,"eta_s":...}) and one JSON line
{"run_id","run_dir","report","outcome",...} on stdout at the end;
--format table|json|md prints that outcome on stdout in the format asked.

Before anything is created or any device touched, the scenario is checked
against its lab (hosts it names, senders it counts) and the limits
(--max-repetitions, --max-flows): every problem is reported as
file:line: field: message.

--executor slurm runs the matrix's emulated points as one Slurm job array
(one point per task: 'labctl worker --point N RUN_DIR', into the run
directory, which must be on storage the nodes share), follows it with
scontrol, submits points left without a result again (--retries), and
gathers them into the same archive; points on a hardware lab run here.
Ctrl-C cancels the array; 'labctl run --resume RUN_DIR' submits only the
points without a result. Partition, account, time, CPUs, memory and more
come from --slurm-* flags or a profile (docs/slurm.md).

Exit status: 0 when every point ran; 1 when the run failed or some points
failed (outcome "partial": the report covers the others; the manifest has
each failed point's error), and with --strict when the run is "degraded"
(every point ran but telemetry is incomplete: a gap, coalesced samples,
unreadable counter values, points InfluxDB lacks; the warnings say where;
docs/telemetry.md); 2 for
usage errors.

Examples:
   labctl run incast
   labctl run allreduce --lab leafspine:2x4:4@100
   labctl run workload-matrix          # ECMP x 3 loads x 2 workloads
   labctl run workload-matrix 2>progress.jsonl | jq .report   # unattended: progress lines, one result line
   labctl run my.yaml --lab lab.yaml --max-concurrent 64     # hardware hosts start at most 64 clients at once
   labctl run workload-matrix --executor slurm --out /shared/runs --slurm-partition short --slurm-time 30:00
   labctl run --resume /shared/runs/workload-matrix-20261125-040000-ab12cd   # after Ctrl-C or a crash
   labctl run my.yaml --lab lab.yaml --influx-url http://127.0.0.1:8086 --influx-bucket labctl --influx-token-env INFLUX_TOKEN`,
		Flags: labRunFlags(
			newFormatFlag(""),
			waitFlag,
			strictFlag(false),
			&cli.StringFlag{Name: "resume", Usage: "go on with `RUN`, a run directory of --executor slurm: submit only the points without a result, then gather"},
		),
		Action: func(c *cli.Context) (err error) {
			var s *scenarios.Scenario
			var job *runJob // a resumed run's
			switch {
			case c.IsSet("resume"):
				if c.NArg() != 0 {
					return exitError{2, fmt.Errorf("--resume RUN takes no SCENARIO: the run's executor.json names it")}
				}
				if job, s, err = loadRunJob(c.String("resume")); err != nil {
					return err
				}
			case c.NArg() != 1:
				return exitError{2, fmt.Errorf("run needs exactly one SCENARIO (a file or one of: %s)", strings.Join(scenarios.Builtin(), ", "))}
			default:
				if s, err = scenarios.Load(c.Args().First()); err != nil {
					return err
				}
			}
			o, err := parseOptions(c)
			if err != nil {
				return err
			}
			if c.IsSet("lab") {
				if job != nil {
					return exitError{2, fmt.Errorf("--lab: a resumed run keeps its lab")}
				}
				if s.Sweeps("lab") {
					return exitError{2, fmt.Errorf("--lab: scenario %s sweeps lab in its matrix; drop one of them", s.Name)}
				}
				s.Lab = o.Lab
			}
			if c.IsSet("engine") {
				s.Emulation.Engine = c.String("engine")
			}
			tty := isTerminal(os.Stderr)
			logger := newLogger(o.Verbose)
			if !tty { // stderr is a log a machine may read: JSON lines only
				logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(o.Verbose)}))
			}
			influx, err := o.Influx.Config()
			if err != nil {
				return err
			}
			agentBin, err := agentBinary(c.Context, c.String("agent"))
			if err != nil {
				return err
			}
			if err := scenarios.CheckHostModules(s, schemeCheck(hostschemes.MustRegistry())); err != nil {
				return err
			}
			r := o.runner(logger, agentBin)
			r.Influx = influx
			warn := func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) }
			if tty {
				r.Progress = newTermProgress(os.Stderr)
			} else {
				jp := newJSONProgress(os.Stderr)
				r.Progress, warn = jp, jp.Warning
			}
			r.Labs = labOpener{log: logger, wait: c.Duration("wait"), stage: r.Progress.Stage}
			if !s.Sweeps("lab") { // lease the lab before the run directory exists (a swept lab is leased as it opens)
				r.Progress.Stage(scenarios.StageReserve, cmp.Or(s.Lab, scenarios.DefaultLab))
				release, err := takeLab(c.Context, cmp.Or(s.Lab, scenarios.DefaultLab), "run "+s.Name, c.Duration("wait"))
				if err != nil {
					return err
				}
				defer func() { // a lost lease fails the run
					if lerr := release(); lerr != nil {
						err = errors.Join(err, lerr)
					}
				}()
			}
			var out *scenarios.Outcome
			switch {
			case job != nil:
				out, err = resumeRun(c, o, r, job, s)
			case o.Executor == "slurm":
				out, err = runOnSlurm(c.Context, c, o, r, s, agentBin, nil)
			default:
				out, err = r.Run(c.Context, s)
			}
			if out == nil {
				return err
			}
			for _, w := range out.Warnings {
				warn(w)
			}
			if out.Report == "" {
				warn("run archive (incomplete): " + out.Dir)
			}
			switch {
			case o.Format != "":
				if perr := printOutcome(os.Stdout, o.Format, out); perr != nil && err == nil {
					err = perr
				}
			case !tty:
				if jerr := writeJSON(os.Stdout, out); jerr != nil && err == nil {
					err = jerr
				}
			case out.Report != "":
				fmt.Fprintf(os.Stderr, "run %s %s\nreport: %s\n", out.RunID, out.Outcome, out.Report)
			}
			if err == nil && c.Bool("strict") && out.Outcome == scenarios.OutcomeDegraded {
				err = exitError{1, fmt.Errorf("run %s: %w (--strict; %d warnings)", out.RunID, scenarios.ErrDegraded, len(out.Warnings))}
			}
			return err
		},
	}
}

// printOutcome prints a run's outcome (--format): its id, outcome,
// archive and report, failed points and warnings below.
func printOutcome(w io.Writer, format string, out *scenarios.Outcome) error {
	return printResult(w, format, out, func() table {
		t := table{Head: []string{"RUN ID", "OUTCOME", "RUN DIR", "REPORT"}}
		t.add(out.RunID, out.Outcome, out.Dir, orDash(out.Report))
		for _, p := range out.Failed {
			t.Foot = append(t.Foot, "failed point: "+p)
		}
		for _, m := range out.Warnings {
			t.Foot = append(t.Foot, "warning: "+m)
		}
		return t
	}, nil)
}

func newLogger(verbose bool) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(verbose)}))
}

func logLevel(verbose bool) slog.Level {
	if verbose {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// Limits on what one run may ask for (scenarios.Limits): a typo must not
// exhaust the controller's memory.
var (
	maxRepetitionsFlag = &cli.IntFlag{Name: "max-repetitions", Value: scenarios.DefaultLimits().Repetitions,
		Usage: "refuse a scenario whose repetitions pass this"}
	maxFlowsFlag = &cli.IntFlag{Name: "max-flows", Value: scenarios.DefaultLimits().FlowsPerPoint,
		Usage: "refuse a workload point expected to hold more flows than this (estimated from its CDF, load and duration)"}
)

func runLimits(c *cli.Context) scenarios.Limits {
	return scenarios.Limits{Repetitions: c.Int("max-repetitions"), FlowsPerPoint: c.Int("max-flows")}
}
