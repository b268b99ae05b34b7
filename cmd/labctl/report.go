package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/reports"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "print the report of a run archive",
		ArgsUsage: "RUN_DIR",
		Description: `Reads a run archive (runs/<run-id>/) and prints its report: per point the flow
count, FCT mean/p50/p95/p99/p99.9/max overall and per flow-size bucket, aggregate
goodput, PFC pause frames, peak queue depth per switch port, telemetry points,
and for all-reduce the step times, algbw and busbw. Reports need only the
archive, never the lab.

Examples:
   labctl report runs/incast-20261122-101500-a1b2c3 --format md
   labctl report runs/incast-20261122-101500-a1b2c3 --format json | jq .points[0].fct_ns
   labctl report runs/incast-20261122-101500-a1b2c3 --format html > report.html`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "md", Usage: "md, json or html"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("report needs exactly one RUN_DIR")}
			}
			switch f := c.String("format"); f {
			case "md", "json", "html":
				return reports.Render(c.Args().First(), f, os.Stdout)
			default:
				return exitError{2, fmt.Errorf("--format %q: want md, json or html", f)}
			}
		},
	}
}
