package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/reports/capacity"
	"github.com/labctl/labctl/scenarios"
)

func capacityCommand() *cli.Command {
	return &cli.Command{
		Name:      "capacity",
		Usage:     "find the highest load at which an SLO still holds",
		ArgsUsage: "SCENARIO",
		Description: `Runs SCENARIO's workload traffic entry at one load after another (bisection
between --lo and --hi to within --tol, or exactly the loads of --grid) and
reports the highest load at which the SLO holds, with the curve. Each
measurement is an ordinary run archive in --out; the answer goes to
OUT/capacity-<scenario>-<time>/capacity.{json,md,html}. The scenario fixes the
scheme, topology (or --lab) and workload; it must not have a matrix.

An SLO is METRIC[BUCKET]<=LIMIT or METRIC>=LIMIT over the metrics of
'labctl regress' (docs/regress.md): e.g. slowdown.p99[<100KB]<=10 (p99
slowdown of flows under 100 KB), fct.p99<=2000000 (ns), goodput_gbps>=80. With
repetitions, every repetition must meet it. A run that fails, or has no flow
the SLO measures, counts as a miss. Bisection assumes the metric grows with
load; the answer says when the measured curve was not monotonic.

Examples:
   labctl capacity workload.yaml --slo 'slowdown.p99[<100KB]<=10'
   labctl capacity workload.yaml --slo 'slowdown.p99<=20' --lo 0.2 --hi 0.9 --tol 0.05
   labctl capacity workload.yaml --slo 'fct.mean<=500000' --grid 0.3,0.5,0.7 --lab leafspine:2x2:4@100
   labctl capacity workload.yaml --slo 'slowdown.p99<=20' --executor slurm --slurm-partition short   # each load's repetitions as one array (docs/slurm.md)`,
		Flags: append([]cli.Flag{
			agentFlag,
			&cli.StringFlag{Name: "slo", Required: true, Usage: "the SLO, e.g. 'slowdown.p99[<100KB]<=10'"},
			&cli.StringFlag{Name: "lab", Usage: "lab file, generated topology or running lab name (default: the scenario's)"},
			&cli.StringFlag{Name: "traffic", Usage: "the workload traffic entry to load, by name (default: the only one)"},
			&cli.Float64Flag{Name: "lo", Value: 0.1, Usage: "bisection: lowest load"},
			&cli.Float64Flag{Name: "hi", Value: 0.9, Usage: "bisection: highest load"},
			&cli.Float64Flag{Name: "tol", Value: 0.02, Usage: "bisection: stop when the bracket is this narrow"},
			&cli.IntFlag{Name: "max-steps", Usage: "bisection: at most this many runs (0: until --tol)"},
			&cli.StringFlag{Name: "grid", Usage: "measure exactly these loads instead, e.g. 0.2,0.4,0.6,0.8"},
			&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of the run archives and the answer"},
			&cli.DurationFlag{Name: "point-timeout", Value: 10 * time.Minute, Usage: "give up on a point's traffic after this long"},
			engineFlag, maxRepetitionsFlag, maxFlowsFlag,
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log debug detail to stderr"},
		}, append(executorFlags(), gnmiFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("capacity needs exactly one SCENARIO")}
			}
			slo, err := capacity.ParseSLO(c.String("slo"))
			if err != nil {
				return exitError{2, fmt.Errorf("--slo: %w", err)}
			}
			opt := capacity.Options{Lo: c.Float64("lo"), Hi: c.Float64("hi"), Tol: c.Float64("tol"), MaxSteps: c.Int("max-steps")}
			if g := c.String("grid"); g != "" {
				if opt.Grid, err = parseLoads(g); err != nil {
					return exitError{2, fmt.Errorf("--grid: %w", err)}
				}
			}
			if err := opt.Validate(); err != nil {
				return exitError{2, err}
			}
			if err := checkExecutor(c); err != nil {
				return err
			}
			s, err := scenarios.Load(c.Args().First())
			if err != nil {
				return err
			}
			if c.IsSet("lab") {
				s.Lab = c.String("lab")
			}
			if c.IsSet("engine") {
				s.Emulation.Engine = c.String("engine")
			}
			if _, err := s.WithLoad(c.String("traffic"), 0.5); err != nil {
				return exitError{2, err} // the scenario cannot be swept: say so before any run
			}
			agentBin, err := agentBinary(c.Context, c.String("agent"))
			if err != nil {
				return err
			}
			gnmiSec, err := gnmiSecurity(c)
			if err != nil {
				return err
			}
			logger := newLogger(c.Bool("verbose"))
			r := &scenarios.Runner{Labs: labOpener{log: logger}, OutDir: c.String("out"), Logger: logger, Version: version,
				PointTimeout: c.Duration("point-timeout"), AgentPath: agentBin, Limits: runLimits(c),
				Schemes: schemeCheck(schemes.MustRegistry()), Engines: engineCheck, GNMI: gnmiSec}
			tty := isTerminal(os.Stderr)
			if tty {
				r.Progress = newTermProgress(os.Stderr)
				opt.Progress = func(st capacity.Step, done, planned int) {
					fmt.Fprintf(os.Stderr, "capacity %d/~%d: load %g: %s = %s: %s\n", done, planned, st.Load, slo.Metric, st.Measured(), meetsWord(st))
				}
			}
			measure := func(ctx context.Context, load float64) (float64, string, error) {
				sc, err := s.WithLoad(c.String("traffic"), load)
				if err != nil {
					return math.NaN(), "", err
				}
				var out *scenarios.Outcome
				if c.String("executor") == "slurm" { // the measurement's points (repetitions) as one array
					out, err = runOnSlurm(ctx, c, r, sc, agentBin, func(j *runJob) { j.Traffic, j.Load = c.String("traffic"), &load })
				} else {
					out, err = r.Run(ctx, sc)
				}
				if out == nil {
					return math.NaN(), "", err
				}
				if err != nil {
					return math.NaN(), out.Dir, err
				}
				v, err := capacity.Value(reports.Metrics(out.Summary), slo)
				return v, out.Dir, err
			}
			res, err := capacity.Search(c.Context, measure, slo, opt)
			if res == nil {
				return err
			}
			dir, werr := capacity.Save(c.String("out"), s.Name, res)
			if werr != nil {
				return werr
			}
			if tty {
				fmt.Fprintf(os.Stderr, "%s.\ncurve: %s\n", res.Answer(), filepath.Join(dir, "capacity.html"))
			} else {
				enc := json.NewEncoder(os.Stdout)
				enc.SetEscapeHTML(false) // SLOs are written with < and >
				if jerr := enc.Encode(map[string]any{"answer": res.Answer(), "best_load": res.Best, "found": res.Found, "dir": dir}); jerr != nil && err == nil {
					err = jerr
				}
			}
			return err
		},
	}
}

func meetsWord(s capacity.Step) string {
	if s.Meets {
		return "meets"
	}
	return "miss"
}

// parseLoads reads a comma-separated list of loads (Options.Validate
// checks their range).
func parseLoads(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a load in (0, 1]", f)
		}
		out = append(out, v)
	}
	return out, nil
}
