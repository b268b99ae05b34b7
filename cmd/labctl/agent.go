package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/perftest/agent"
)

func agentCommand() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "the host agent labctl ships to hosts (you rarely run it by hand)",
		Subcommands: []*cli.Command{{
			Name:  "run",
			Usage: "run this host's part of a traffic schedule",
			Description: `Starts a perftest server shortly before each flow this host receives (a
bounded number at once), starts a client for every flow it sends at the
schedule's epoch plus its offset (after the flows it depends on), and writes
per-flow start/end times and the tools' verbatim output as JSON to --out.
Interrupting it kills every perftest process it started.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "schedule", Required: true, Usage: "schedule JSON file"},
				&cli.StringFlag{Name: "host", Required: true, Usage: "this host's name in the schedule"},
				&cli.StringFlag{Name: "out", Required: true, Usage: "where to write the result JSON"},
				&cli.IntFlag{Name: "max-concurrent", Usage: "run at most this many perftest clients at once (0: no bound); later flows start late"},
			},
			Action: func(c *cli.Context) error {
				log := slog.New(slog.NewTextHandler(os.Stderr, nil))
				err := agent.RunFile(c.Context, c.String("schedule"), c.String("out"),
					agent.Options{Self: c.String("host"), MaxConcurrent: c.Int("max-concurrent"), Logger: log})
				if err != nil {
					return fmt.Errorf("agent %s: %w", c.String("host"), err)
				}
				return nil
			},
		}},
	}
}
