package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/reports/regress"
	"github.com/labctl/labctl/scenarios"
)

func baselineStore() string { return filepath.Join(home(), "baselines") }

func regressCommand() *cli.Command {
	return &cli.Command{
		Name:  "regress",
		Usage: "fail when a candidate run is worse than a baseline (exit 1), with JUnit XML for CI",
		Description: `Compares the candidate run's points with the baseline's, group by group (points
with the same parameters; repetitions give a noise allowance), on the metrics the
thresholds file names. When the candidate ran another scheme (e.g. an ecmp
baseline, a drill candidate) and each run has one scheme per condition (load,
workload, ...), groups are compared by condition and the verdict says which
schemes were compared. A metric regresses when it is worse than the baseline by
more than max(relative x baseline, absolute) plus noise_sigma standard errors of
the difference of the means. A point the baseline has and the candidate lost
(failed or not run) is a regression too. Exit status: 0 no regression, 1
regression or (with --strict, the default) a baseline or candidate run that
is degraded (its telemetry is incomplete: docs/telemetry.md), 2 bad usage. Without --thresholds the built-in defaults apply
(FCT mean +10 % and p99 +15 % per size bucket, slowdown, goodput -5 %,
all-reduce bus bandwidth -5 %, any failed flow). Metric names and the
thresholds format: docs/regress.md.

BASELINE is a run directory or the name of a baseline promoted with
'labctl regress promote' (kept under $LABCTL_HOME/baselines, default ~/.labctl).

Examples:
   labctl regress promote runs/nightly-20261120-020000-ab12cd --name nightly
   labctl regress --baseline nightly --candidate runs/nightly-20261123-020000-9f8e7d --junit regress.xml
   labctl regress --baseline runs/a --candidate runs/b --thresholds thresholds.yaml --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Usage: "baseline run directory or promoted baseline name"},
			&cli.StringFlag{Name: "candidate", Usage: "candidate run directory"},
			&cli.StringFlag{Name: "thresholds", Usage: "thresholds YAML (default: the built-in rules)"},
			&cli.StringFlag{Name: "junit", Usage: "also write the verdict as JUnit XML to `FILE`"},
			&cli.BoolFlag{Name: "all", Usage: "list every check, not only the regressions"},
			newFormatFlag(formatTable), jsonAlias,
			strictFlag(true),
		},
		Subcommands: []*cli.Command{{
			Name: "promote", Usage: "make a run the named baseline (a frozen copy of its summary)", ArgsUsage: "RUN_DIR",
			Description: `Copies the run's summary and manifest to $LABCTL_HOME/baselines/NAME; the
previous baseline of that name is kept as NAME/previous. --format json prints
what was promoted (name, run_id, run_dir, promoted) for scripts.

Examples:
   labctl regress promote runs/nightly-20261120-020000-ab12cd --name nightly
   labctl regress promote "$RUN" --name nightly --format json | jq -r .run_id`,
			Flags: []cli.Flag{&cli.StringFlag{Name: "name", Required: true, Usage: "baseline name, e.g. nightly"}, newFormatFlag(formatTable)},
			Action: func(c *cli.Context) error {
				format, err := checkFormat(c)
				if err != nil {
					return err
				}
				if c.NArg() != 1 {
					return exitError{2, fmt.Errorf("promote needs one RUN_DIR")}
				}
				p, err := regress.Promote(c.Args().First(), baselineStore(), c.String("name"))
				if err != nil {
					return err
				}
				return printAction(format, p, fmt.Sprintf("baseline %s is now run %s (%s)", p.Name, p.RunID, p.RunDir),
					[]string{"BASELINE", "RUN ID", "RUN DIR"}, []string{p.Name, p.RunID, p.RunDir})
			},
		}},
		Action: func(c *cli.Context) error {
			if c.String("baseline") == "" || c.String("candidate") == "" {
				return exitError{2, fmt.Errorf("regress needs --baseline and --candidate (or the promote subcommand)")}
			}
			o, err := parseOptions(c)
			if err != nil {
				return err
			}
			th := regress.DefaultThresholds()
			if f := c.String("thresholds"); f != "" {
				if th, err = regress.LoadThresholds(f); err != nil {
					return exitError{2, err}
				}
			}
			started := time.Now()
			bdir, err := regress.ResolveBaseline(c.String("baseline"), baselineStore())
			if err != nil {
				return exitError{2, err}
			}
			base, err := reports.ReadSummary(bdir)
			if err != nil {
				return exitError{2, fmt.Errorf("baseline: %w", err)}
			}
			cand, err := reports.ReadSummary(c.String("candidate"))
			if err != nil {
				return exitError{2, fmt.Errorf("candidate: %w", err)}
			}
			if c.Bool("strict") {
				if err := strictOutcome("baseline", base); err != nil {
					return err
				}
				if err := strictOutcome("candidate", cand); err != nil {
					return err
				}
			}
			v := regress.Compare(reports.Metrics(base), reports.Metrics(cand), th)
			if f := c.String("junit"); f != "" {
				if err := writeJUnit(f, v, regress.JUnitMeta{Baseline: base.RunID, Candidate: cand.RunID,
					Started: started, Elapsed: time.Since(started)}); err != nil {
					return err
				}
			}
			if err := printVerdict(os.Stdout, o.Format, v, base.RunID, cand.RunID, c.Bool("all")); err != nil {
				return err
			}
			if !v.Passed() {
				return exitError{1, fmt.Errorf("%d of %d checks regressed", len(v.Regressions()), len(v.Checks))}
			}
			return nil
		},
	}
}

// strictOutcome refuses to compare a run whose results are incomplete
// (--strict): a degraded run's fabric counters have gaps.
func strictOutcome(which string, s *reports.Summary) error {
	if s.Outcome != scenarios.OutcomeDegraded {
		return nil // failed points are regressions of their own
	}
	msg := fmt.Sprintf("%s run %s is %s, not ok", which, s.RunID, s.Outcome)
	if len(s.Warnings) > 0 {
		msg += ": " + s.Warnings[0]
		if len(s.Warnings) > 1 {
			msg += fmt.Sprintf(" (and %d more warnings)", len(s.Warnings)-1)
		}
	}
	return exitError{1, fmt.Errorf("%s; --strict=false compares it anyway", msg)}
}

// printVerdict prints the verdict: json the whole of it; table the
// checks that regressed (all: every check) under their group, as prose; md
// the same checks as a table.
func printVerdict(w io.Writer, format string, v regress.Verdict, base, cand string, all bool) error {
	label := map[string]string{} // baseline group -> how its lines are headed
	for _, p := range v.Paired {
		label[p.BaselineGroup] = fmt.Sprintf("%s (%s -> %s)", p.Condition, p.BaselineScheme, p.CandidateScheme)
	}
	head := fmt.Sprintf("candidate %s vs baseline %s: %d checks", cand, base, len(v.Checks))
	verdict := "no regression"
	if !v.Passed() {
		verdict = fmt.Sprintf("%d of %d checks regressed", len(v.Regressions()), len(v.Checks))
	}
	return printResult(w, format, v, func() table {
		t := table{Head: []string{"GROUP", "CHECK", "REGRESSED"}}
		for _, ch := range v.Checks {
			if ch.Regressed || all {
				t.add(cmp.Or(label[ch.Group], ch.Group), ch.Message(), strconv.FormatBool(ch.Regressed))
			}
		}
		for _, g := range v.New {
			t.add(g, "new in the candidate, not compared", "false")
		}
		t.Foot = []string{head + "; " + verdict}
		return t
	}, func(w io.Writer) error {
		fmt.Fprintln(w, head)
		if len(v.Paired) > 0 {
			fmt.Fprintln(w, "compared by condition, the runs having other schemes there:")
			for _, p := range v.Paired {
				fmt.Fprintf(w, "  %s\n", p)
			}
		}
		for _, ch := range v.Checks {
			if ch.Regressed || all {
				fmt.Fprintf(w, "  %s: %s\n", cmp.Or(label[ch.Group], ch.Group), ch.Message())
			}
		}
		for _, g := range v.New {
			fmt.Fprintf(w, "  %s: new in the candidate, not compared\n", g)
		}
		if v.Passed() {
			_, err := fmt.Fprintln(w, "no regression")
			return err
		}
		return nil
	})
}

func writeJUnit(path string, v regress.Verdict, m regress.JUnitMeta) error {
	if err := archive.WriteFile(path, func(w io.Writer) error { return regress.WriteJUnit(w, v, m) }); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
