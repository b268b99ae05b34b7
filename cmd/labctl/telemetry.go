package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// strictFlag is --strict: a degraded run is a failure.
func strictFlag(def bool) cli.Flag {
	return &cli.BoolFlag{Name: "strict", Value: def,
		Usage: "exit 1 when a run is degraded (telemetry gaps, coalesced samples, unreadable counter values, points InfluxDB lacks)"}
}

func telemetryCommand() *cli.Command {
	return &cli.Command{
		Name:  "telemetry",
		Usage: "work on a run's telemetry",
		Subcommands: []*cli.Command{{
			Name:      "replay",
			Usage:     "write the points InfluxDB did not take during a run, from the run's spool",
			ArgsUsage: "RUN_DIR",
			Description: `A run writes telemetry to its archive (telemetry/*.lp) and, with --influx-url,
to InfluxDB. Points InfluxDB did not acknowledge (it was down, hung or slow)
wait in RUN_DIR/spool/influx; the run replays them as soon as InfluxDB answers
again and once more at its end. What is still there (the run said so in a
warning, and ended "degraded") is written by this command, each point once:
the spool records what InfluxDB acknowledged.

InfluxDB is the one the run used (its manifest names URL, bucket and org; not
the token), unless the flags say otherwise. When the spool is empty the
run's "not in InfluxDB" warning is dropped and a run that was degraded for
that reason alone becomes ok; its summary.json and report.html are written
again. Exit status: 0 when the spool is empty, 1 when points are left.

Example:
   labctl telemetry replay runs/incast-20261122-101500-a1b2c3 --influx-token-env INFLUX_TOKEN`,
			Flags: append(influxFlags(true),
				&cli.DurationFlag{Name: "timeout", Value: 5 * time.Second, Usage: "bound on one write request"},
				newFormatFlag(formatTable),
			),
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return exitError{2, fmt.Errorf("telemetry replay needs one RUN_DIR")}
				}
				return replayRun(c, c.Args().First())
			},
		}},
	}
}

// replayResult is what telemetry replay did.
type replayResult struct {
	RunID    string `json:"run_id"`
	URL      string `json:"url"`
	Bucket   string `json:"bucket"`
	Spool    string `json:"spool"`
	Replayed int    `json:"replayed"`
	Pending  int    `json:"pending"`
}

func replayRun(c *cli.Context, dir string) error {
	m, err := readRunManifest(dir)
	if err != nil {
		return err
	}
	o, err := parseOptions(c)
	if err != nil {
		return err
	}
	var run reports.InfluxMeta
	if m.Telemetry != nil && m.Telemetry.Influx != nil {
		run = *m.Telemetry.Influx
	}
	cfg := collectors.InfluxConfig{URL: cmp.Or(o.Influx.URL, run.URL), Bucket: cmp.Or(o.Influx.Bucket, run.Bucket),
		Org: cmp.Or(o.Influx.Org, run.Org), Token: o.Influx.Token, Timeout: c.Duration("timeout"), SpoolDir: archive.Open(dir).Spool()}
	if cfg.URL == "" || cfg.Bucket == "" {
		return exitError{2, fmt.Errorf("run %s names no InfluxDB: give --influx-url and --influx-bucket", m.RunID)}
	}
	res := replayResult{RunID: m.RunID, URL: cfg.URL, Bucket: cfg.Bucket, Spool: cfg.SpoolDir}
	say := func(text string) error {
		return printResult(os.Stdout, o.Format, res, func() table {
			t := table{Head: []string{"RUN ID", "INFLUXDB", "BUCKET", "REPLAYED", "PENDING", "SPOOL"}}
			t.add(res.RunID, res.URL, res.Bucket, strconv.Itoa(res.Replayed), strconv.Itoa(res.Pending), res.Spool)
			return t
		}, func(w io.Writer) error { _, err := fmt.Fprintln(w, text); return err })
	}
	if _, err := os.Stat(cfg.SpoolDir); os.IsNotExist(err) {
		res.Spool = ""
		return say(fmt.Sprintf("run %s: no spool, nothing to replay", m.RunID))
	}
	st, rerr := collectors.Replay(c.Context, cfg)
	res.Replayed, res.Pending = st.Replayed, st.Pending
	if perr := say(fmt.Sprintf("run %s: %d points written to %s (bucket %s), %d left in %s", m.RunID, st.Replayed, cfg.URL, cfg.Bucket, st.Pending, cfg.SpoolDir)); perr != nil {
		return perr
	}
	if uerr := recordReplay(dir, st, rerr); uerr != nil {
		return uerr
	}
	if rerr != nil {
		return fmt.Errorf("telemetry replay %s: %w", dir, rerr)
	}
	if st.Pending > 0 {
		return fmt.Errorf("telemetry replay %s: %d points left", dir, st.Pending)
	}
	return nil
}

// recordReplay brings the manifest up to date (pending points, the
// outcome they made degraded, a warning saying what the replay did) and
// writes the reports again. It rereads the manifest: the run may have
// been written to meanwhile.
func recordReplay(dir string, st collectors.InfluxStats, rerr error) error {
	m, err := readRunManifest(dir)
	if err != nil {
		return err
	}
	if m.Telemetry == nil || m.Telemetry.Influx == nil || m.Outcome == "running" {
		return nil // nothing to update, or the run still writes it
	}
	inf := &m.Telemetry.Influx.Stats
	inf.Replayed += st.Replayed
	inf.Written += st.Replayed
	inf.Pending = st.Pending
	var ws []string
	for _, w := range m.Warnings {
		if !strings.HasPrefix(w, scenarios.UnreplayedPrefix) || st.Pending > 0 {
			ws = append(ws, w)
		}
	}
	note := fmt.Sprintf("telemetry replay at %s UTC: %d points written to InfluxDB, %d left", time.Now().UTC().Format(time.DateTime), st.Replayed, st.Pending)
	if rerr != nil {
		note += fmt.Sprintf(" (%v)", rerr)
	}
	m.Warnings = append(ws, note)
	if m.Outcome == scenarios.OutcomeDegraded && !m.Telemetry.Incomplete() {
		m.Outcome = scenarios.OutcomeOK
	}
	if err := archive.WriteManifest(archive.Open(dir), m); err != nil {
		return err
	}
	if ok, _ := archive.Open(dir).HasSummary(); ok {
		if _, err := reports.WriteRunReports(dir); err != nil {
			return fmt.Errorf("run %s: reports: %w", dir, err)
		}
	}
	return nil
}

func readRunManifest(dir string) (*reports.Manifest, error) {
	var m reports.Manifest
	if err := archive.ReadManifest(archive.Open(dir), &m); err != nil {
		return nil, err
	}
	return &m, nil
}
