package main

import (
	"cmp"
	"fmt"
	"os"
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
		Usage: "exit 1 when a run is degraded (telemetry gaps, coalesced samples, points InfluxDB lacks)"}
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
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "influx-url", Usage: "InfluxDB (default: the run's)"},
				&cli.StringFlag{Name: "influx-bucket", Usage: "bucket (default: the run's)"},
				&cli.StringFlag{Name: "influx-org", Usage: "organisation (default: the run's)"},
				&cli.StringFlag{Name: "influx-token", EnvVars: []string{"LABCTL_INFLUX_TOKEN"}, Usage: "InfluxDB token"},
				&cli.StringFlag{Name: "influx-token-env", Usage: "name of an environment variable holding the token"},
				&cli.StringFlag{Name: "influx-token-file", Usage: "file whose first line is the token"},
				&cli.DurationFlag{Name: "timeout", Value: 5 * time.Second, Usage: "bound on one write request"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return exitError{2, fmt.Errorf("telemetry replay needs one RUN_DIR")}
				}
				return replayRun(c, c.Args().First())
			},
		}},
	}
}

func replayRun(c *cli.Context, dir string) error {
	m, err := readRunManifest(dir)
	if err != nil {
		return err
	}
	var run reports.InfluxMeta
	if m.Telemetry != nil && m.Telemetry.Influx != nil {
		run = *m.Telemetry.Influx
	}
	cfg := collectors.InfluxConfig{URL: cmp.Or(c.String("influx-url"), run.URL), Bucket: cmp.Or(c.String("influx-bucket"), run.Bucket),
		Org: cmp.Or(c.String("influx-org"), run.Org), Timeout: c.Duration("timeout"), SpoolDir: archive.Open(dir).Spool()}
	if cfg.URL == "" || cfg.Bucket == "" {
		return exitError{2, fmt.Errorf("run %s names no InfluxDB: give --influx-url and --influx-bucket", m.RunID)}
	}
	if _, err := os.Stat(cfg.SpoolDir); os.IsNotExist(err) {
		fmt.Printf("run %s: no spool, nothing to replay\n", m.RunID)
		return nil
	}
	if cfg.Token, err = influxToken(c); err != nil {
		return err
	}
	st, rerr := collectors.Replay(c.Context, cfg)
	fmt.Printf("run %s: %d points written to %s (bucket %s), %d left in %s\n", m.RunID, st.Replayed, cfg.URL, cfg.Bucket, st.Pending, cfg.SpoolDir)
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
