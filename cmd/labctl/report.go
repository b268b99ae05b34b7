package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/reports"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "print the report of a run archive",
		ArgsUsage: "RUN_DIR",
		Description: `Reads a run archive (runs/<run-id>/) and prints its report: per point the flow
count, FCT mean/p50/p99/p99.9/max and slowdown (FCT over the flow's ideal FCT
alone on an idle path, which includes the base round trip) overall and per
flow-size bucket, goodput, PFC pause
frames and rate per switch tier, ECN mark rate, peak and mean queue depth,
out-of-order packets, requested vs achieved load, failed flows and points;
for all-reduce the step times, algbw and busbw. Points that repeat the same
parameters are grouped (mean and min-max over repetitions) and schemes are
compared the way the papers do ("drill reduces avg FCT by 20.0% vs ecmp at
load 0.8"). Reports need only the archive, never the lab. Metric definitions:
docs/reports.md.

Examples:
   labctl report runs/incast-20261122-101500-a1b2c3 --format md
   labctl report runs/incast-20261122-101500-a1b2c3 --format json | jq .points[0].fct_ns
   labctl report runs/lb-sweep-20261122-101500-a1b2c3 --format html --out report.html
   labctl report runs/lb-sweep-20261122-101500-a1b2c3 --format csv --buckets 10KB,100KB,1MB`,
		Flags: reportFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("report needs exactly one RUN_DIR")}
			}
			return writeReport(c, c.Args().Slice())
		},
	}
}

// reportFlags are the flags report and compare share.
func reportFlags() []cli.Flag {
	return []cli.Flag{
		reportFormatFlag(),
		&cli.StringFlag{Name: "out", Usage: "write to `FILE` instead of standard output"},
		&cli.StringFlag{Name: "buckets", Value: "100KB,1MB", Usage: "flow-size bucket edges, e.g. 10KB,100KB,1MB (KB/MB/GB decimal, KiB/MiB/GiB binary)"},
		&cli.StringFlag{Name: "baseline-scheme", Usage: "scheme the comparisons measure against (default: ecmp if present, else the first by name; a scheme no point has is an error)"},
	}
}

// reportFormatFlag is --format of report and compare: table (the md
// report), json, md and the report's own html and csv.
func reportFormatFlag() *formatFlag {
	var more []string
	for _, f := range reports.Formats() {
		if !slices.Contains(resultFormats, f) {
			more = append(more, f)
		}
	}
	return newFormatFlag(formatMD, more...)
}

// writeReport analyses the run archives (one: its report; several: their
// comparison) and prints them as the flags say.
func writeReport(c *cli.Context, dirs []string) error {
	format, err := checkFormat(c)
	if err != nil {
		return err
	}
	if format == formatTable { // the report's tables are Markdown's
		format = formatMD
	}
	buckets, err := reports.ParseBuckets(c.String("buckets"))
	if err != nil {
		return exitError{2, fmt.Errorf("--buckets: %w", err)}
	}
	a := reports.Analyser{Buckets: buckets, BaselineScheme: c.String("baseline-scheme"), Crashed: crashed,
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, "labctl: warning:", msg) }}
	path := c.String("out")
	if path == "" {
		return usage(a.Render(dirs, format, os.Stdout))
	}
	// written then renamed: no half-written report, even after a crash
	var rerr error
	err = archive.WriteFile(path, func(w io.Writer) error { rerr = a.Render(dirs, format, w); return rerr })
	if rerr != nil {
		return usage(rerr)
	}
	return err
}

// usage makes a --baseline-scheme that names none of the runs' schemes a
// usage error (exit 2); the error lists the schemes there are.
func usage(err error) error {
	if errors.Is(err, reports.ErrNoSuchScheme) {
		return exitError{2, fmt.Errorf("--baseline-scheme: %w", err)}
	}
	return err
}
