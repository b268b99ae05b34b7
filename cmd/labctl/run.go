package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/collectors"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/scenarios"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a scenario and write its run archive and report",
		ArgsUsage: "SCENARIO",
		Description: `SCENARIO is a scenario YAML file or a built-in name (incast, allreduce).

The lab is, in order: --lab, the scenario's lab:, or the built-in emulated
leaf-spine (` + scenarios.DefaultLab + `). LAB is a lab file, a generated
topology (leafspine:SxL:H[@gbps]) or the name of a lab started with
'labctl lab up'. An emulated lab that is not already up is started for the
run and stopped after it.

The run goes plan -> collect -> traffic -> gather -> analyse and writes
OUT/<run-id>/: manifest.json, plan.json, raw/, flows.csv, telemetry/*.lp,
summary.json, report.html. On a terminal it shows progress; otherwise it
prints one JSON line {"run_id","run_dir","report"} on stdout.

Examples:
   labctl run incast
   labctl run allreduce --lab leafspine:2x4:4@100
   labctl run my.yaml --lab lab.yaml --influx-url http://127.0.0.1:8086 --influx-bucket labctl --influx-token-env INFLUX_TOKEN`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lab", Usage: "lab file, generated topology or running lab name"},
			&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of run archives"},
			&cli.StringFlag{Name: "influx-url", Usage: "also write telemetry to this InfluxDB (v2 API; InfluxDB 1.8+ works)", EnvVars: []string{"LABCTL_INFLUX_URL"}},
			&cli.StringFlag{Name: "influx-bucket", Usage: "InfluxDB bucket (database/retention on 1.8)", EnvVars: []string{"LABCTL_INFLUX_BUCKET"}},
			&cli.StringFlag{Name: "influx-org", Usage: "InfluxDB organisation (ignored by 1.8)", EnvVars: []string{"LABCTL_INFLUX_ORG"}},
			&cli.StringFlag{Name: "influx-token", Usage: "InfluxDB token; prefer --influx-token-env or --influx-token-file so it stays out of shell history", EnvVars: []string{"LABCTL_INFLUX_TOKEN"}},
			&cli.StringFlag{Name: "influx-token-env", Usage: "name of an environment variable holding the InfluxDB token"},
			&cli.StringFlag{Name: "influx-token-file", Usage: "file whose first line is the InfluxDB token"},
			&cli.DurationFlag{Name: "point-timeout", Value: 10 * time.Minute, Usage: "give up on a point's traffic after this long (agents are killed)"},
			engineFlag,
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log debug detail to stderr"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("run needs exactly one SCENARIO (a file or one of: %s)", strings.Join(scenarios.Builtin(), ", "))}
			}
			s, err := scenarios.Load(c.Args().First())
			if err != nil {
				return err
			}
			logger := newLogger(c.Bool("verbose"))
			labName := firstNonEmpty(c.String("lab"), s.Lab, scenarios.DefaultLab)
			em := s.Emulation
			if c.IsSet("engine") {
				em.Engine = c.String("engine")
			}
			lab, closeLab, err := openLab(c.Context, labName, em, logger)
			if err != nil {
				return err
			}
			defer closeLab()
			influx, err := influxConfig(c)
			if err != nil {
				return err
			}
			pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: lab.KnownHosts, Logger: logger})
			defer pool.Close()
			r := &scenarios.Runner{Lab: lab, SSH: pool, OutDir: c.String("out"), Influx: influx, Logger: logger, Version: version,
				PointTimeout: c.Duration("point-timeout")}
			tty := isTerminal(os.Stderr)
			if tty {
				r.Progress = newTermProgress(os.Stderr)
			}
			out, err := r.Run(c.Context, s)
			if err != nil {
				if out != nil {
					fmt.Fprintf(os.Stderr, "run archive (incomplete): %s\n", out.Dir)
				}
				return err
			}
			for _, w := range out.Warnings {
				fmt.Fprintln(os.Stderr, "warning:", w)
			}
			if tty {
				fmt.Fprintf(os.Stderr, "run %s done\nreport: %s\n", out.RunID, out.Report)
				return nil
			}
			return json.NewEncoder(os.Stdout).Encode(out)
		},
	}
}

func influxConfig(c *cli.Context) (*collectors.InfluxConfig, error) {
	url := c.String("influx-url")
	if url == "" {
		return nil, nil
	}
	if c.String("influx-bucket") == "" {
		return nil, exitError{2, fmt.Errorf("--influx-url needs --influx-bucket")}
	}
	token := c.String("influx-token")
	if v := c.String("influx-token-env"); v != "" {
		token = os.Getenv(v)
		if token == "" {
			return nil, exitError{2, fmt.Errorf("--influx-token-env %s: the variable is empty", v)}
		}
	}
	if f := c.String("influx-token-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--influx-token-file: %w", err)
		}
		token = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}
	return &collectors.InfluxConfig{URL: url, Bucket: c.String("influx-bucket"), Org: c.String("influx-org"), Token: token}, nil
}

func newLogger(verbose bool) *slog.Logger {
	lvl := slog.LevelWarn
	if verbose {
		lvl = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
