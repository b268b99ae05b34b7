package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/scenarios"
)

// options are the flags the verbs share, parsed once (parseOptions) from
// whichever flag groups a command has: every verb that touches a lab or
// telemetry builds its flags from the same groups, so a flag means the
// same thing, with the same default, wherever it appears.
type options struct {
	// Lab is --lab ("" when not given: the scenario's, or the verb's default).
	Lab string
	// Out is --out: the parent directory of run archives (runs, run, capacity).
	Out string
	// Format is --format, checked against the command's formats.
	Format string
	// Influx is what the --influx-* flags say (token read from its
	// reference); Config makes it a writer's configuration.
	Influx influxFlagValues
	// GNMI is what the gNMI TLS/auth flags say (collectors.GNMISecurity.Over
	// lays it over the lab file's), and GNMIArgs the same flags as given,
	// for a worker's command line: references to the password, never it.
	GNMI     collectors.GNMISecurity
	GNMIArgs []string
	// Executor, MaxConcurrent, PointTimeout, Limits: how a run's points run.
	Executor      string
	MaxConcurrent int
	PointTimeout  time.Duration
	Limits        scenarios.Limits
	Verbose       bool
}

// influxFlagValues are the --influx-* flags with the token resolved.
type influxFlagValues struct{ URL, Bucket, Org, Token string }

// Config is the InfluxDB a run writes to (nil: none).
func (v influxFlagValues) Config() (*collectors.InfluxConfig, error) {
	if v.URL == "" {
		return nil, nil
	}
	if v.Bucket == "" {
		return nil, exitError{2, fmt.Errorf("--influx-url needs --influx-bucket")}
	}
	return &collectors.InfluxConfig{URL: v.URL, Bucket: v.Bucket, Org: v.Org, Token: v.Token}, nil
}

// parseOptions reads the shared flag groups c's command has, checking
// each once.
func parseOptions(c *cli.Context) (*options, error) {
	o := &options{Lab: c.String("lab"), Out: c.String("out"), Verbose: c.Bool("verbose")}
	var err error
	if defines(c, "format") {
		if o.Format, err = checkFormat(c); err != nil {
			return nil, err
		}
	}
	if defines(c, "influx-url") {
		o.Influx = influxFlagValues{URL: c.String("influx-url"), Bucket: c.String("influx-bucket"), Org: c.String("influx-org")}
		if o.Influx.Token, err = influxToken(c); err != nil {
			return nil, err
		}
	}
	if defines(c, "tls-ca") {
		if o.GNMI, err = gnmiSecurity(c); err != nil {
			return nil, err
		}
		if o.GNMIArgs, err = gnmiArgs(c); err != nil {
			return nil, err
		}
	}
	if defines(c, "executor") {
		if err := checkExecutor(c); err != nil {
			return nil, err
		}
		o.Executor = c.String("executor")
	}
	if defines(c, "max-concurrent") {
		if o.MaxConcurrent = c.Int("max-concurrent"); o.MaxConcurrent < 0 {
			return nil, exitError{2, fmt.Errorf("--max-concurrent %d: must be >= 0", o.MaxConcurrent)}
		}
	}
	if defines(c, "point-timeout") {
		o.PointTimeout = c.Duration("point-timeout")
	}
	if defines(c, "max-flows") {
		o.Limits = runLimits(c)
	}
	return o, nil
}

// runner is the scenario runner the options describe (its Labs, Influx
// and Progress are the verb's to set).
func (o *options) runner(logger *slog.Logger, agent string) *scenarios.Runner {
	return &scenarios.Runner{OutDir: o.Out, Logger: logger, Version: version, PointTimeout: o.PointTimeout,
		MaxConcurrent: o.MaxConcurrent, AgentPath: agent, Limits: o.Limits, Schemes: schemeCheck(schemes.MustRegistry()), Engines: engineCheck, GNMI: o.GNMI}
}

// defines says whether c's command has the flag name.
func defines(c *cli.Context, name string) bool {
	if c.Command == nil {
		return false
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// labFlag is --lab of the verbs that run scenarios on a lab they may start.
func labFlag() cli.Flag {
	return &cli.StringFlag{Name: "lab", Usage: "lab file, generated topology or running lab name (default: the scenario's lab:, else " + scenarios.DefaultLab + ")"}
}

// outFlag is --out of the verbs that write or read run archives.
func outFlag() cli.Flag {
	return &cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of run archives"}
}

// verboseFlag is -v.
func verboseFlag() cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log debug detail to stderr"}
}

// runFlags say how a run's points run: shared by run and capacity.
func runFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "point-timeout", Value: 10 * time.Minute, Usage: "give up on a point's traffic after this long (agents are killed, an emulated lab's simulation is cut short; the run goes on)"},
		&cli.IntFlag{Name: "max-concurrent", Usage: "each host agent runs at most this many perftest clients at once (0: no bound); flows beyond start late and the manifest counts them"},
		agentFlag, engineFlag, maxRepetitionsFlag, maxFlowsFlag,
	}
}

// influxFlags are where a run also writes its telemetry. fromRun: the
// flags of a command that reads a run's archive, whose manifest names the
// InfluxDB the run used (the flags override it; no environment defaults).
func influxFlags(fromRun bool) []cli.Flag {
	token := &cli.StringFlag{Name: "influx-token", Usage: "InfluxDB token; prefer --influx-token-env or --influx-token-file so it stays out of shell history", EnvVars: []string{"LABCTL_INFLUX_TOKEN"}}
	refs := []cli.Flag{token,
		&cli.StringFlag{Name: "influx-token-env", Usage: "name of an environment variable holding the InfluxDB token"},
		&cli.StringFlag{Name: "influx-token-file", Usage: "file whose first line is the InfluxDB token"},
	}
	if fromRun {
		return append([]cli.Flag{
			&cli.StringFlag{Name: "influx-url", Usage: "InfluxDB (default: the run's)"},
			&cli.StringFlag{Name: "influx-bucket", Usage: "bucket (default: the run's)"},
			&cli.StringFlag{Name: "influx-org", Usage: "organisation (default: the run's)"},
		}, refs...)
	}
	return append([]cli.Flag{
		&cli.StringFlag{Name: "influx-url", Usage: "also write telemetry to this InfluxDB (v2 API; InfluxDB 1.8+ works)", EnvVars: []string{"LABCTL_INFLUX_URL"}},
		&cli.StringFlag{Name: "influx-bucket", Usage: "InfluxDB bucket (database/retention on 1.8)", EnvVars: []string{"LABCTL_INFLUX_BUCKET"}},
		&cli.StringFlag{Name: "influx-org", Usage: "InfluxDB organisation (ignored by 1.8)", EnvVars: []string{"LABCTL_INFLUX_ORG"}},
	}, refs...)
}

// influxToken is the token the --influx-token* flags give.
func influxToken(c *cli.Context) (string, error) {
	token := c.String("influx-token")
	if v := c.String("influx-token-env"); v != "" {
		token = os.Getenv(v)
		if token == "" {
			return "", exitError{2, fmt.Errorf("--influx-token-env %s: the variable is empty", v)}
		}
	}
	if f := c.String("influx-token-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("--influx-token-file: %w", err)
		}
		token = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}
	return token, nil
}

// labRunFlags are the flags of a verb that runs scenarios: lab, output,
// InfluxDB, how points run, where they run, gNMI security.
func labRunFlags(own ...cli.Flag) []cli.Flag {
	fl := append([]cli.Flag{labFlag(), outFlag()}, own...)
	fl = append(fl, influxFlags(false)...)
	fl = append(fl, runFlags()...)
	fl = append(fl, verboseFlag())
	fl = append(fl, executorFlags()...)
	return append(fl, gnmiFlags()...)
}

// absFile is file made absolute (a worker runs in another directory).
func absFile(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	return filepath.Abs(file)
}
