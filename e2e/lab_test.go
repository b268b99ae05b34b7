package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/scenarios"
)

// emulatedLab starts a generated lab and returns its inventory, an SSH pool
// that trusts the lab's known_hosts, and a file to ship as the agent. Any
// file will do: emulated hosts run the agent through the twin, but the file
// still travels over SFTP and is checked with sha256sum as on a real lab.
func emulatedLab(t *testing.T, spec string) (*inventory.Lab, *sshdrv.Pool, string) {
	inv, pool, agent, _ := emulatedLabWith(t, spec, emulator.Options{Seed: 1})
	return inv, pool, agent
}

func emulatedLabWith(t *testing.T, spec string, opt emulator.Options) (*inventory.Lab, *sshdrv.Pool, string, *emulator.Lab) {
	t.Helper()
	lab, inv, pool := testlab.Start(t, spec, nil, opt, sshdrv.Config{})
	agent := filepath.Join(t.TempDir(), "labctl")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return inv, pool, agent, lab
}

// fileWriter returns a function that writes test files into dir.
func fileWriter(t *testing.T, dir string) func(name, text string) {
	return func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dropsAndPauses runs a one-point scenario on a lab and returns the
// point's drops and PAUSE frames, from the run's summary.
func dropsAndPauses(ctx context.Context, t *testing.T, inv *inventory.Lab, pool *sshdrv.Pool, agent string, s *scenarios.Scenario) (drops, pfc uint64) {
	t.Helper()
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
	o, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	p := o.Summary.Points[0]
	return p.Drops, p.PFCPauseFrames
}

// runYAML runs the scenario text on a lab and fails the test unless the
// run succeeds.
func runYAML(ctx context.Context, t *testing.T, inv *inventory.Lab, pool *sshdrv.Pool, agent, text string) *scenarios.Outcome {
	t.Helper()
	s, err := scenarios.Parse([]byte(text), "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
	o, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
