package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/reports"
)

// outcomeCrashed is what labctl runs and labctl report say of a run whose
// manifest says "running" but whose controller process is gone.
const outcomeCrashed = reports.OutcomeCrashed

// crashed says why a run's controller no longer runs ("" if it runs, or
// the run has an outcome of its own).
func crashed(m *reports.Manifest) string {
	if m.Outcome != "running" {
		return ""
	}
	return lease.ProcessGone(m.Host, m.PID, m.PIDStart)
}

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list the run archives under an output directory, with crashed runs marked",
		Description: `Lists every run archive (a directory with a manifest.json) under --out: run
id, scenario, outcome, the stage it reached and its start time, oldest first.
A run whose manifest still says "running" but whose labctl process is gone
(the pid in the manifest no longer runs, or now runs another process: its
start time differs) is listed as "crashed", with the stage it reached; its
archive holds whole records up to the crash and labctl report renders it.

Examples:
   labctl runs
   labctl runs --out /data/runs --format json | jq '.[] | select(.outcome == "crashed")'`,
		Flags: []cli.Flag{outFlag(), newFormatFlag(formatTable)},
		Action: func(c *cli.Context) error {
			o, err := parseOptions(c)
			if err != nil {
				return err
			}
			list, err := listRuns(o.Out)
			if err != nil {
				return err
			}
			return writeRuns(c.App.Writer, list, o.Format)
		},
	}
}

// runEntry is one line of labctl runs.
type runEntry struct {
	RunID    string    `json:"run_id"`
	Scenario string    `json:"scenario"`
	Outcome  string    `json:"outcome"`
	Stage    string    `json:"stage"`
	Started  time.Time `json:"started"`
	Dir      string    `json:"dir"`
	Note     string    `json:"note,omitempty"` // why a run is crashed
}

// listRuns reads the manifests of the archives under out.
func listRuns(out string) ([]runEntry, error) {
	dirs, err := archive.List(out)
	if err != nil {
		return nil, err
	}
	list := []runEntry{}
	for _, d := range dirs {
		var m reports.Manifest
		var fe *archive.FormatError
		if err := archive.ReadManifest(d, &m); errors.As(err, &fe) {
			// a newer labctl's run: listed, saying why it is not read
			list = append(list, runEntry{RunID: d.ID(), Outcome: "unknown", Dir: d.Path(), Note: err.Error()})
			continue
		} else if err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		e := runEntry{RunID: m.RunID, Scenario: m.Scenario, Outcome: m.Outcome, Stage: m.Stage, Started: m.Started, Dir: d.Path()}
		if why := crashed(&m); why != "" {
			e.Outcome, e.Note = outcomeCrashed, why
		}
		list = append(list, e)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Started.Before(list[j].Started) })
	return list, nil
}

func writeRuns(w io.Writer, list []runEntry, format string) error {
	return printResult(w, format, list, func() table {
		t := table{Head: []string{"RUN ID", "SCENARIO", "OUTCOME", "STAGE", "STARTED", "NOTE"}}
		for _, e := range list {
			t.add(e.RunID, e.Scenario, e.Outcome, e.Stage, e.Started.Format(time.RFC3339), e.Note)
		}
		return t
	}, nil)
}
