package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/scenarios"
)

// TestAPointCostsEachHostOneConnection counts, on every host's SSH server,
// what one workload point costs it: one connection (one handshake and key
// exchange) for the whole run; commands: the agent check (mkdir of the
// home, sha256sum of the agent), RNIC counters before and after (a cat of
// the hw_counters and an ethtool -S per RNIC; polling during the traffic,
// the same two per round, is left out here: rnic_interval 1h), the agent
// itself; SFTP transfers: its schedule and its result, plus the agent's
// one upload to the first host (the emulated hosts share a store). More of
// any of them at 1,024 hosts is seconds of wall time (bench/e2e.sh).
func TestAPointCostsEachHostOneConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lab, inv, pool := testlab.Start(t, "leafspine:2x2:4@100", nil, emulator.Options{Seed: 1, Dir: t.TempDir()}, sshdrv.Config{})
	s, err := scenarios.Parse([]byte(`name: costs
telemetry: {rnic_interval: 1h}
traffic:
  - {name: ws, pattern: workload, cdf: websearch, load: 0.3, duration: 200us, seed: 1}
`), "costs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: fakeAgent(t)}
	o, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	checkStages(t, o.Dir)
	uploads := 0
	for _, h := range inv.Hosts {
		use, ok := lab.SSHUse(h.Name)
		if !ok {
			t.Fatalf("host %s has no SSH server", h.Name)
		}
		// Per RNIC: hw_counters and ethtool -S, before and after.
		if want := 2 + 2*2*len(h.RNICs) + 1; use.Connections != 1 || use.Execs != want {
			t.Errorf("host %s: %d connections, %d commands; want 1 and %d", h.Name, use.Connections, use.Execs, want)
		}
		switch use.Subsystems {
		case 2:
		case 3:
			uploads++
		default:
			t.Errorf("host %s: %d SFTP transfers, want 2 (schedule, result) or 3 (and the agent)", h.Name, use.Subsystems)
		}
	}
	if uploads != 1 {
		t.Errorf("the agent went to %d hosts, want 1 (the others share its store)", uploads)
	}
}

// checkStages: the manifest records the run's stages in the order they
// ran, each with its time (bench/e2e.sh times the stages by them).
func checkStages(t *testing.T, dir string) {
	t.Helper()
	m := readManifest(t, dir)
	var got []string
	if !scenarios.IsStage(m.Stage) {
		t.Errorf("manifest stage %q is not one of scenarios.Stages", m.Stage)
	}
	for i, st := range m.Stages {
		if !scenarios.IsStage(st.Stage) {
			t.Errorf("stage %d %q is not one of scenarios.Stages", i, st.Stage)
		}
		if i > 0 && st.At.Before(m.Stages[i-1].At) || st.At.Before(m.Started) {
			t.Errorf("stage %d (%s) at %v, before the one before it or the run's start", i, st.Stage, st.At)
		}
		if len(got) == 0 || got[len(got)-1] != st.Stage {
			got = append(got, st.Stage)
		}
	}
	want := []string{"plan", "collect", "agent", "counters", "schedules", "traffic", "gather", "counters", "telemetry", "gather", "analyse", "done"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stages %v, want %v", got, want)
	}
}
