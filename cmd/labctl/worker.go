package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/scenarios"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:      "worker",
		Usage:     "run one point of a run planned by 'labctl run --executor slurm' (what each array task runs)",
		ArgsUsage: "RUN_DIR",
		Description: `Runs point N of the run in RUN_DIR (an index into its plan.json) with the
scenario and options its executor.json keeps, starting the point's own
emulated lab, and writes the point's result to RUN_DIR/points/N whole or not
at all. Slurm's array task N runs 'labctl worker --point N RUN_DIR'; the
manifest records the job (SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID) and node.
The run command's gNMI flags (--tls-ca, --tls-skip-verify, --gnmi-plaintext,
--gnmi-username, --gnmi-password-env/-file) come before --point: the
executor passes them on, the password by reference only.
Exit status 0 when the point has a result (ok or failed, as in a local run),
1 when it has none (the controller submits it again).`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "point", Required: true, Usage: "the point's index in plan.json"},
			verboseFlag(),
		}, gnmiFlags()...), // the run command's, passed on by the executor

		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("worker needs one RUN_DIR")}
			}
			o, err := parseOptions(c)
			if err != nil {
				return err
			}
			dir := c.Args().First()
			job, s, err := loadRunJob(dir)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(o.Verbose)}))
			r := jobRunner(job, logger)
			r.GNMI = o.GNMI
			at := scenarios.Placement{Executor: "local"}
			if id := os.Getenv("SLURM_ARRAY_JOB_ID"); id != "" {
				at = scenarios.Placement{Executor: "slurm", JobID: id + "_" + os.Getenv("SLURM_ARRAY_TASK_ID"), Node: os.Getenv("SLURMD_NODENAME")}
			}
			if at.Node == "" {
				at.Node, _ = os.Hostname()
			}
			return r.RunPoint(c.Context, s, dir, c.Int("point"), at)
		},
	}
}

// loadRunJob reads a run's executor.json and the scenario it names, with
// the command's overrides applied as the run command applied them.
func loadRunJob(dir string) (*runJob, *scenarios.Scenario, error) {
	b, err := os.ReadFile(archive.Open(dir).ExecutorJob())
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w (only a run started with --executor slurm has one)", dir, err)
	}
	job := &runJob{}
	if err := json.Unmarshal(b, job); err != nil {
		return nil, nil, fmt.Errorf("run %s: executor.json: %w", dir, err)
	}
	s, err := scenarios.Load(job.Scenario)
	if err != nil {
		return nil, nil, err
	}
	if job.Lab != "" {
		s.Lab = job.Lab
	}
	if job.Engine != "" {
		s.Emulation.Engine = job.Engine
	}
	if job.Load != nil {
		if s, err = s.WithLoad(job.Traffic, *job.Load); err != nil {
			return nil, nil, err
		}
	}
	return job, s, nil
}

// jobRunner is the runner a job's points run with.
func jobRunner(job *runJob, logger *slog.Logger) *scenarios.Runner {
	return &scenarios.Runner{Labs: labOpener{log: logger}, Logger: logger, Version: version,
		PointTimeout: job.PointTimeout, MaxConcurrent: job.MaxConcurrent, AgentPath: job.Agent,
		Limits: job.Limits, Schemes: schemeCheck(schemes.MustRegistry()), Engines: engineCheck}
}

// newRunJob is what a run command's flags make of s for executor.json.
func newRunJob(c *cli.Context, o *options, s *scenarios.Scenario, agent string) *runJob {
	job := &runJob{Executor: o.Executor, Scenario: cmp.Or(s.File, c.Args().First()), Agent: agent,
		PointTimeout: o.PointTimeout, Limits: o.Limits, MaxConcurrent: o.MaxConcurrent, GNMIArgs: o.GNMIArgs}
	if c.IsSet("lab") {
		job.Lab = o.Lab
	}
	if c.IsSet("engine") {
		job.Engine = c.String("engine")
	}
	return job
}

// Running says whether lab spec is up here ('labctl lab up'): its points
// stay on the controller (scenarios.Runner.PlanPoints asks).
func (o labOpener) Running(spec string) bool {
	_, up, err := runningLab(spec)
	return err == nil && up
}
