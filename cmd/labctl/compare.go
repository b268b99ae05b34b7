package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare the points of several run archives",
		ArgsUsage: "RUN_DIR...",
		Description: `Treats the points of several run archives as one set and prints their
comparison: each point's scheme comes from its parameters, or else from its
run's scenario name (the run id when two runs share one); points with the same
parameters are repetitions, and every pair of schemes is compared at each load
and workload in the papers' form ("drill reduces avg FCT by 20.0% vs ecmp at
load 0.8 (websearch)"), for avg and p99 FCT and slowdown, over all flows and
per size bucket. The HTML report adds FCT-vs-load, slowdown-by-size and CDF
plots. Definitions: docs/reports.md.

Examples:
   labctl compare runs/lb-ecmp-* runs/lb-drill-* --format md
   labctl compare runs/a runs/b --baseline-scheme letflow --format html --out cmp.html
   labctl compare runs/a runs/b --format json | jq '.comparisons[] | .sentence'
   labctl compare runs/a runs/b --format csv --buckets 10KB,100KB,1MB > points.csv`,
		Flags: reportFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return exitError{2, fmt.Errorf("compare needs at least one RUN_DIR")}
			}
			return writeReport(c, c.Args().Slice())
		},
	}
}
