package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/scenarios"
)

// TestSONiCWatermarksClearedPerPoint: on a lab whose leaves run SONiC, the
// runner clears every SONiC switch's queue watermarks through the SONiC
// driver (sudo sonic-clear queue watermark all) once before each point,
// and leaves the other switches alone.
func TestSONiCWatermarksClearedPerPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	lab, inv, pool, agent := sonicLeavesLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := runYAML(ctx, t, inv, pool, agent, `name: sonic-wm
repetitions: 3
traffic:
  - {name: incast, pattern: incast, senders: 3, receiver: h1, bytes: 1MiB}
`)
	points := len(o.Summary.Points)
	if points != 3 {
		t.Fatalf("%d points, want 3", points)
	}
	leaves := 0
	for _, sw := range inv.Switches {
		n := lab.WatermarkClears(sw.Name)
		switch {
		case sw.Role == "leaf":
			leaves++
			if n != points {
				t.Errorf("SONiC switch %s: %d watermark clears, want one per point (%d)", sw.Name, n, points)
			}
		case n != 0:
			t.Errorf("switch %s (not SONiC): %d watermark clears", sw.Name, n)
		}
	}
	if leaves == 0 {
		t.Fatal("no leaf in the lab")
	}
	for _, w := range o.Warnings {
		t.Logf("warning: %s", w)
	}
}

// TestSONiCWatermarkClearFailureDegradesTheRun: a SONiC switch whose
// watermarks cannot be cleared before a point may report an earlier
// point's peak, so the run says so and ends degraded, not ok.
func TestSONiCWatermarkClearFailureDegradesTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	lab, inv, pool, agent := sonicLeavesLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The leaf's first SSH command of the run is the watermark clear.
	if _, err := lab.Inject(ctx, emulator.FaultRequest{Device: "leaf1", Kind: "fail-ssh-command"}); err != nil {
		t.Fatal(err)
	}
	o := runYAML(ctx, t, inv, pool, agent, `name: sonic-wm-fail
traffic:
  - {name: incast, pattern: incast, senders: 3, receiver: h1, bytes: 1MiB}
`)
	named := false
	for _, w := range o.Warnings {
		named = named || strings.Contains(w, "leaf1") && strings.Contains(w, "watermark")
	}
	if o.Outcome != scenarios.OutcomeDegraded || !named {
		t.Errorf("outcome %s, warnings %q; want degraded with a watermark warning naming leaf1", o.Outcome, o.Warnings)
	}
}

// sonicLeavesLab is a leaf-spine whose leaves run SONiC, and an agent.
func sonicLeavesLab(t *testing.T) (*emulator.Lab, *inventory.Lab, *sshdrv.Pool, string) {
	t.Helper()
	lab, inv, pool := testlab.Start(t, "leafspine:1x2:2", func(l *inventory.Lab) {
		for i := range l.Switches {
			if l.Switches[i].Role == "leaf" {
				l.Switches[i].QoSDriver, l.Switches[i].OS = "", "sonic"
			}
		}
	}, emulator.Options{Seed: 1}, sshdrv.Config{})
	agent := filepath.Join(t.TempDir(), "labctl")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return lab, inv, pool, agent
}
