package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/reports/papers"
	"github.com/labctl/labctl/scenarios"
)

func papersCommand() *cli.Command {
	return &cli.Command{
		Name:  "papers",
		Usage: "rerun the papers' experiments and write the reproduction report (docs/papers.md)",
		Description: `Runs every scenario of the claims file (reports/papers/claims.yaml: the
papers' experiments under scenarios/papers/) on the emulated lab, then
writes one Markdown report: the command, date, mode and each scenario's
wall time; per paper its tables of the twin's figures and, per claim of
the seeds digest §3, the paper's figure, the twin's figure and whether
the twin agrees on the direction or ordering. Figures come from each
run's summary, the one 'labctl report' shows.

--quick cuts every scenario as the claims file says (shorter arrival
windows, smaller flows, fewer points) so that the whole report runs in
a few minutes, for CI; its claims are indicative only, and the report
says so. Run archives go to --runs as with 'labctl run'; --reuse takes
the newest finished archive there of each scenario (in the same mode)
and runs only the scenarios that have none. Exit status 1 when a
scenario failed (the report is still written, its claims n/a); an
interrupt (Ctrl-C) writes no report.

Examples:
   labctl papers                                  # full scale, writes docs/papers.md
   labctl papers --quick --out /tmp/papers.md     # CI
   labctl papers --only reunion-s --quick --out -`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "quick", Usage: "reduced scale (CI): the claims file's cut of each scenario"},
			&cli.StringFlag{Name: "out", Value: filepath.Join("docs", "papers.md"), Usage: "write the report to `FILE` (- for standard output)"},
			&cli.StringFlag{Name: "runs", Value: "runs", Usage: "parent `DIR` of the run archives"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only these scenarios (e.g. reunion-s or papers/reunion-s; repeat or comma-separate); the others show n/a"},
			&cli.BoolFlag{Name: "reuse", Usage: "take each scenario's newest finished archive in --runs; run only those without one"},
			&cli.DurationFlag{Name: "point-timeout", Value: 10 * time.Minute, Usage: "give up on a point's traffic after this long"},
			agentFlag, waitFlag,
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log debug detail to stderr"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return exitError{2, fmt.Errorf("papers takes no arguments (--only names scenarios)")}
			}
			f, err := papers.Load()
			if err != nil {
				return err
			}
			todo, err := selectScenarios(f.Scenarios(), c.StringSlice("only"))
			if err != nil {
				return exitError{2, err}
			}
			agentBin, err := agentBinary(c.Context, c.String("agent"))
			if err != nil {
				return err
			}
			logger := newLogger(c.Bool("verbose"))
			r := &scenarios.Runner{Labs: labOpener{log: logger, wait: c.Duration("wait")}, OutDir: c.String("runs"), Logger: logger, Version: version,
				PointTimeout: c.Duration("point-timeout"), AgentPath: agentBin, Limits: scenarios.DefaultLimits(),
				Schemes: schemeCheck(schemes.MustRegistry())}
			h := papers.Header{Command: "labctl " + strings.Join(os.Args[1:], " "), Date: time.Now(), Quick: c.Bool("quick"),
				Machine: fmt.Sprintf("%d CPUs, load average %s at the start", runtime.NumCPU(), loadAverage())}
			runs := map[string]*papers.Run{}
			var failed []string
			for _, sc := range todo {
				run := paperRun(c, r, sc)
				if err := c.Context.Err(); err != nil { // interrupted: no half report over the last one
					return fmt.Errorf("papers: %s: %w (no report written)", sc.Name, err)
				}
				runs[sc.Name] = run
				if run.Err != "" {
					failed = append(failed, sc.Name)
				}
				fmt.Fprintf(os.Stderr, "papers: %s: %s in %s %s\n", sc.Name, run.RunID, run.Wall.Round(time.Second), run.Err)
			}
			write := func(w io.Writer) error { return papers.Render(w, f, h, runs) }
			if out := c.String("out"); out == "-" {
				err = write(os.Stdout)
			} else if err = archive.WriteFile(out, write); err == nil {
				fmt.Fprintf(os.Stderr, "papers: report: %s\n", out)
			}
			if err == nil && len(failed) > 0 {
				err = exitError{1, fmt.Errorf("papers: %s failed (their claims are n/a in the report)", strings.Join(failed, ", "))}
			}
			return err
		},
	}
}

// selectScenarios keeps the scenarios --only names (all without it).
func selectScenarios(all []papers.Scenario, only []string) ([]papers.Scenario, error) {
	if len(only) == 0 {
		return all, nil
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	var out []papers.Scenario
	for _, o := range only {
		for _, o := range strings.Split(o, ",") {
			i := slices.Index(names, o)
			if i < 0 {
				i = slices.Index(names, "papers/"+o)
			}
			if i < 0 {
				return nil, fmt.Errorf("--only %s: the claims file has %s", o, strings.Join(names, ", "))
			}
			out = append(out, all[i])
		}
	}
	return out, nil
}

// paperRun runs one scenario (cut by --quick), or with --reuse reads its
// newest archive; a failure is in Run.Err.
func paperRun(c *cli.Context, r *scenarios.Runner, sc papers.Scenario) *papers.Run {
	run := &papers.Run{Scenario: sc.Name}
	s, err := scenarios.Load(sc.Name)
	if err == nil && c.Bool("quick") {
		if err = sc.Quick.Apply(s); err == nil {
			s.Name += "-quick" // its archives apart from the full runs'
		}
	}
	if err != nil {
		run.Err = err.Error()
		return run
	}
	if c.Bool("reuse") {
		if err := reuseRun(c.String("runs"), s.Name, run); err == nil {
			return run
		}
	}
	start := time.Now()
	out, err := r.Run(c.Context, s)
	run.Wall = time.Since(start)
	if out != nil {
		run.RunID, run.Summary = out.RunID, out.Summary
	}
	if err != nil {
		run.Err = err.Error()
	}
	return run
}

// reuseRun fills run from the newest finished archive of scenario name
// in dir (run ids start with the name and sort by time) whose points
// did not all fail. An archive is analysed afresh; one kept without its
// flows (manifest and summary.json only, as a long run's is kept to
// save space) gives the summary it holds.
func reuseRun(dir, name string, run *papers.Run) error {
	matches, _ := filepath.Glob(filepath.Join(dir, name+"-2*"))
	slices.Sort(matches)
	var loaded *reports.Run
	for i := len(matches) - 1; i >= 0 && loaded == nil; i-- {
		if _, err := os.Stat(archive.Open(matches[i]).Manifest()); err != nil {
			continue // not a run's archive
		}
		l, err := reports.LoadRun(matches[i], nil)
		if err == nil && l.Manifest.Outcome != scenarios.OutcomeFailed && l.Manifest.Outcome != "running" {
			loaded = l
		}
	}
	if loaded == nil {
		return fmt.Errorf("no finished archive of %s in %s", name, dir)
	}
	var sum *reports.Summary
	var err error
	if loaded.Flows == nil {
		sum, err = reports.ReadSummary(loaded.Dir)
	} else {
		sum, err = reports.Analyse(loaded)
	}
	if err != nil {
		return err
	}
	m := loaded.Manifest
	run.RunID, run.Summary, run.Wall, run.Reused = m.RunID, sum, m.Ended.Sub(m.Started), true
	return nil
}

// loadAverage is the 1-minute load average ("n/a" off Linux).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "n/a"
}
