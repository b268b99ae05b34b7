package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/executor/slurm"
	"github.com/labctl/labctl/scenarios"
)

// executorFlags choose where a matrix's points run (docs/slurm.md).
func executorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "executor", Value: "local", Usage: "where the points run: local (this process, one after another) or slurm (one job array; emulated-lab points only)"},
		&cli.IntFlag{Name: "retries", Value: 2, Usage: "slurm: submit points left without a result (failed or pre-empted tasks) again up to this many times"},
		&cli.StringFlag{Name: "slurm-profile", Usage: "slurm: YAML file with partition, account, time, cpus, mem, extra_args, labctl, max_running (default $LABCTL_HOME/slurm.yaml when it exists); flags override it"},
		&cli.StringFlag{Name: "slurm-partition", Usage: "slurm: partition (sbatch --partition)"},
		&cli.StringFlag{Name: "slurm-account", Usage: "slurm: account (sbatch --account)"},
		&cli.StringFlag{Name: "slurm-time", Usage: "slurm: time limit per task (sbatch --time, e.g. 30:00)"},
		&cli.IntFlag{Name: "slurm-cpus", Usage: "slurm: CPUs per task (sbatch --cpus-per-task)"},
		&cli.StringFlag{Name: "slurm-mem", Usage: "slurm: memory per task (sbatch --mem, e.g. 4G)"},
		&cli.StringFlag{Name: "slurm-args", Usage: "slurm: more sbatch arguments, split on spaces (e.g. '--qos=low --exclude=n3')"},
		&cli.StringFlag{Name: "slurm-labctl", Usage: "slurm: the labctl binary as the cluster's nodes see it (default: this one's path, on shared storage)"},
		&cli.IntFlag{Name: "slurm-max-running", Usage: "slurm: at most this many tasks at once (--array=...%N)"},
	}
}

// slurmProfile is what a profile file and the flags say about the cluster.
type slurmProfile struct {
	Partition  string   `yaml:"partition" json:"partition,omitempty"`
	Account    string   `yaml:"account" json:"account,omitempty"`
	Time       string   `yaml:"time" json:"time,omitempty"`
	CPUs       int      `yaml:"cpus" json:"cpus,omitempty"`
	Mem        string   `yaml:"mem" json:"mem,omitempty"`
	ExtraArgs  []string `yaml:"extra_args" json:"extra_args,omitempty"`
	Labctl     string   `yaml:"labctl" json:"labctl,omitempty"`
	MaxRunning int      `yaml:"max_running" json:"max_running,omitempty"`
	Retries    int      `yaml:"retries" json:"retries"`
}

// runJob is what the run directory's executor.json keeps: enough for a
// worker to run any point, and for --resume to go on.
type runJob struct {
	Executor string `json:"executor"`
	// Scenario is the scenario file (absolute) or built-in name; Lab and
	// Engine the command's overrides of it.
	Scenario      string           `json:"scenario"`
	Lab           string           `json:"lab,omitempty"`
	Engine        string           `json:"engine,omitempty"`
	Agent         string           `json:"agent"`
	PointTimeout  time.Duration    `json:"point_timeout_ns"`
	MaxConcurrent int              `json:"max_concurrent,omitempty"`
	Limits        scenarios.Limits `json:"limits"`
	Slurm         *slurmProfile    `json:"slurm,omitempty"`
	// GNMIArgs are the run command's gNMI TLS/auth flags, given to every
	// worker (gnmiArgs: no password in them).
	GNMIArgs []string `json:"gnmi_args,omitempty"`
	// Load, when set, is the load capacity gave the workload entry
	// Traffic (scenarios.Scenario.WithLoad).
	Traffic string   `json:"traffic,omitempty"`
	Load    *float64 `json:"load,omitempty"`
}

// checkExecutor refuses an --executor that is neither local nor slurm.
func checkExecutor(c *cli.Context) error {
	if e := c.String("executor"); e != "local" && e != "slurm" {
		return exitError{2, fmt.Errorf("--executor %q: local or slurm", e)}
	}
	return nil
}

// readSlurmProfile merges the profile file (if any) with the flags.
func readSlurmProfile(c *cli.Context) (*slurmProfile, error) {
	p := &slurmProfile{Retries: c.Int("retries")}
	file := c.String("slurm-profile")
	if file == "" {
		if def := filepath.Join(home(), "slurm.yaml"); fileExists(def) {
			file = def
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--slurm-profile: %w", err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("slurm profile %s: %w", file, err)
		}
		if c.IsSet("retries") {
			p.Retries = c.Int("retries")
		}
	}
	set := func(flag string, dst *string) {
		if c.IsSet(flag) {
			*dst = c.String(flag)
		}
	}
	set("slurm-partition", &p.Partition)
	set("slurm-account", &p.Account)
	set("slurm-time", &p.Time)
	set("slurm-mem", &p.Mem)
	set("slurm-labctl", &p.Labctl)
	if c.IsSet("slurm-cpus") {
		p.CPUs = c.Int("slurm-cpus")
	}
	if c.IsSet("slurm-max-running") {
		p.MaxRunning = c.Int("slurm-max-running")
	}
	if c.IsSet("slurm-args") {
		p.ExtraArgs = strings.Fields(c.String("slurm-args"))
	}
	if p.Labctl == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("slurm: find labctl: %w", err)
		}
		p.Labctl = self
	}
	if p.Retries < 0 {
		return nil, exitError{2, fmt.Errorf("--retries %d: must be >= 0", p.Retries)}
	}
	return p, nil
}

// newSlurmExecutor builds the executor a job's profile describes, its
// workers given workerArgs (the gNMI flags), with its progress shown on
// progress.
func newSlurmExecutor(p *slurmProfile, workerArgs []string, progress scenarios.Progress) *slurm.Executor {
	o := slurm.Options{Worker: append([]string{p.Labctl, "worker"}, workerArgs...), Partition: p.Partition, Account: p.Account, Time: p.Time,
		CPUs: p.CPUs, Mem: p.Mem, MaxRunning: p.MaxRunning, Extra: p.ExtraArgs, Retries: p.Retries}
	if progress == nil { // a command that shows none
		return &slurm.Executor{Opt: o}
	}
	last := ""
	o.Progress = func(s slurm.Status) {
		item := fmt.Sprintf("job %s: %d running, %d pending", s.JobID, s.Running, s.Pending)
		if s.Try > 0 {
			item += fmt.Sprintf(" (retry %d)", s.Try)
		}
		switch p := progress.(type) {
		case *termProgress:
			p.draw("points", item, s.Done, s.Total)
		default:
			if line := fmt.Sprintf("%s; %d/%d points done", item, s.Done, s.Total); line != last {
				progress.Stage(scenarios.StageSlurm, line)
				last = line
			}
		}
	}
	return &slurm.Executor{Opt: o}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// runOnSlurm runs s's emulated points as a Slurm job array (the others
// here) into a new run archive.
func runOnSlurm(ctx context.Context, c *cli.Context, o *options, r *scenarios.Runner, s *scenarios.Scenario, agent string, adjust func(*runJob)) (*scenarios.Outcome, error) {
	p, err := readSlurmProfile(c)
	if err != nil {
		return nil, err
	}
	if agent, err = filepath.Abs(agent); err != nil {
		return nil, err
	}
	job := newRunJob(c, o, s, agent)
	job.Slurm = p
	if adjust != nil {
		adjust(job)
	}
	return r.RunOn(ctx, s, newSlurmExecutor(p, job.GNMIArgs, r.Progress), job)
}

// resumeRun goes on with a run of --executor slurm: its points without a
// result run again (the array with the profile and gNMI flags the run
// recorded; flags given now override them), then the run is gathered.
func resumeRun(c *cli.Context, o *options, r *scenarios.Runner, job *runJob, s *scenarios.Scenario) (*scenarios.Outcome, error) {
	if job.Slurm == nil {
		return nil, fmt.Errorf("run %s: executor.json has no slurm profile", c.String("resume"))
	}
	p := job.Slurm
	for _, f := range []string{"slurm-partition", "slurm-account", "slurm-time", "slurm-cpus", "slurm-mem", "slurm-args", "slurm-labctl", "slurm-max-running", "retries", "slurm-profile"} {
		if c.IsSet(f) {
			var err error
			if p, err = readSlurmProfile(c); err != nil {
				return nil, err
			}
			break
		}
	}
	workerArgs := job.GNMIArgs
	if len(o.GNMIArgs) > 0 {
		workerArgs = o.GNMIArgs
	}
	jr := jobRunner(job, r.Logger)
	jr.Progress, jr.GNMI = r.Progress, o.GNMI
	return jr.Resume(c.Context, s, newSlurmExecutor(p, workerArgs, r.Progress), c.String("resume"))
}
