package e2e_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/scenarios"
)

const diskScenario = `name: disk
telemetry: {disabled: true}
traffic:
  - {name: workload, pattern: workload, cdf: alistorage2019, load: 0.5, duration: 300us, seed: 1}
`

// TestArchiveEstimateIsAboutRight: the plan's estimate of an emulated
// run's archive is within a factor of two of what the run wrote.
func TestArchiveEstimateIsAboutRight(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agentBin := emulatedLab(t, "leafspine:2x2:4@100")
	o := runYAML(ctx, t, inv, pool, agentBin, diskScenario)
	var plan scenarios.Plan
	readJSON(t, filepath.Join(o.Dir, "plan.json"), &plan)
	var written int64
	err := filepath.WalkDir(o.Dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, err := d.Info()
			if err == nil {
				written += fi.Size()
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("estimated %d bytes, wrote %d", plan.ArchiveEstimateBytes, written)
	if e := plan.ArchiveEstimateBytes; e < written/2 || e > written*2 {
		t.Errorf("estimated %d bytes, the run wrote %d", e, written)
	}
}

// TestRunRefusedWhenTheArchiveCannotFit: an emulated run whose archive the
// output directory cannot hold is refused at plan time, with a message
// saying how much it needs and how much is free, before any traffic.
func TestRunRefusedWhenTheArchiveCannotFit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	inv, pool, agentBin := emulatedLab(t, "leafspine:2x2:4@100")
	s, err := scenarios.Parse([]byte(diskScenario), "disk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: out, AgentPath: agentBin,
		DiskFree: func(string) (uint64, error) { return 64 << 10, nil }}
	o, err := r.Run(context.Background(), s)
	if err == nil {
		t.Fatal("the run went ahead")
	}
	for _, w := range []string{"plan", "needs about", "64.0 KiB free", out, "--out"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "raw", "workload")); err == nil {
		t.Error("traffic ran: raw/workload exists")
	}
}
