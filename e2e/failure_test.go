package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/reports"
	"github.com/labctl/labctl/scenarios"
)

// TestTimedOutRunLeavesArchiveAndNoProcesses: a point that overruns its
// timeout fails the run, the manifest says where it stopped, and nothing of
// the run is left running on any host.
func TestTimedOutRunLeavesArchiveAndNoProcesses(t *testing.T) {
	ctx := context.Background()
	inv, pool, agentBin := emulatedLab(t, "leafspine:1x2:9@100")
	s, _ := scenarios.Load("incast")
	s.Telemetry.Disabled = true
	// The epoch lead alone outlasts the timeout: agents are still waiting.
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agentBin,
		EpochLead: 5 * time.Second, PointTimeout: 50 * time.Millisecond}
	out, err := r.Run(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "traffic:incast-16to1") {
		t.Fatalf("want a failed traffic stage, got %v", err)
	}
	var m reports.Manifest
	b, _ := os.ReadFile(filepath.Join(out.Dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Outcome != "failed" || m.Stage != "traffic:incast-16to1" || m.Error == "" || m.Ended.IsZero() {
		t.Errorf("manifest: outcome %q stage %q error %q", m.Outcome, m.Stage, m.Error)
	}
	for _, h := range inv.Hosts {
		res, err := pool.Exec(ctx, testlab.Target(t, inv, h.Name, sshdrv.EndpointSSH), "pgrep -f 'labctl-agent run'")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitStatus != 1 {
			t.Errorf("%s still runs an agent: %s", h.Name, res.Stdout)
		}
	}
}
