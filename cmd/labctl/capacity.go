package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

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
		Flags: labRunFlags(
			&cli.StringFlag{Name: "slo", Required: true, Usage: "the SLO, e.g. 'slowdown.p99[<100KB]<=10'"},
			&cli.StringFlag{Name: "traffic", Usage: "the workload traffic entry to load, by name (default: the only one)"},
			&cli.Float64Flag{Name: "lo", Value: 0.1, Usage: "bisection: lowest load"},
			&cli.Float64Flag{Name: "hi", Value: 0.9, Usage: "bisection: highest load"},
			&cli.Float64Flag{Name: "tol", Value: 0.02, Usage: "bisection: stop when the bracket is this narrow"},
			&cli.IntFlag{Name: "max-steps", Usage: "bisection: at most this many runs (0: until --tol)"},
			&cli.StringFlag{Name: "grid", Usage: "measure exactly these loads instead, e.g. 0.2,0.4,0.6,0.8"},
			newFormatFlag(""),
		),
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
			o, err := parseOptions(c)
			if err != nil {
				return err
			}
			influx, err := o.Influx.Config()
			if err != nil {
				return err
			}
			s, err := scenarios.Load(c.Args().First())
			if err != nil {
				return err
			}
			if c.IsSet("lab") {
				s.Lab = o.Lab
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
			logger := newLogger(o.Verbose)
			r := o.runner(logger, agentBin)
			r.Labs, r.Influx = labOpener{log: logger}, influx
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
				if o.Executor == "slurm" { // the measurement's points (repetitions) as one array
					out, err = runOnSlurm(ctx, c, o, r, sc, agentBin, func(j *runJob) { j.Traffic, j.Load = c.String("traffic"), &load })
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
			dir, werr := capacity.Save(o.Out, s.Name, res)
			if werr != nil {
				return werr
			}
			var perr error
			switch {
			case o.Format != "":
				perr = printCapacity(os.Stdout, o.Format, res, dir)
			case tty:
				fmt.Fprintf(os.Stderr, "%s.\ncurve: %s\n", res.Answer(), filepath.Join(dir, "capacity.html"))
			default: // one JSON line for a machine
				perr = writeJSON(os.Stdout, capacityAnswer(res, dir))
			}
			if perr != nil && err == nil {
				err = perr
			}
			return err
		},
	}
}

// capacityAnswer is capacity's result as JSON (keys sorted).
func capacityAnswer(res *capacity.Result, dir string) map[string]any {
	return map[string]any{"answer": res.Answer(), "best_load": res.Best, "found": res.Found, "dir": dir}
}

// printCapacity prints the answer in format: in table and md, each
// measured load with its value and verdict, then the answer.
func printCapacity(w io.Writer, format string, res *capacity.Result, dir string) error {
	return printResult(w, format, capacityAnswer(res, dir), func() table {
		t := table{Head: []string{"LOAD", "MEASURED", res.SLO.String(), "RUN"}}
		for _, st := range res.Steps {
			t.add(strconv.FormatFloat(st.Load, 'g', -1, 64), st.Measured(), meetsWord(st), st.Ref)
		}
		t.Foot = []string{res.Answer() + ".", "curve: " + filepath.Join(dir, "capacity.html")}
		return t
	}, nil)
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
