package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/reports"
)

// noLab is a LabSource whose lab never opens: the run fails at its lab
// stage, after the manifest is written.
type noLab struct{}

func (noLab) Open(context.Context, string, Emulation) (*inventory.Lab, func(), error) {
	return nil, nil, errors.New("lab unavailable")
}

// TestManifestNamesTheController: the manifest records the controller's
// host, pid and process start time, which labctl runs uses to tell a
// crashed run from a running one.
func TestManifestNamesTheController(t *testing.T) {
	t.Parallel()
	m := noLabManifest(t)
	host, pid, start := lease.Self()
	if m.Host != host || m.PID != pid || m.PIDStart != start || start == 0 {
		t.Errorf("manifest names %s pid %d start %d, want %s pid %d start %d", m.Host, m.PID, m.PIDStart, host, pid, start)
	}
}

// TestManifestStagesAreNamedStages: a run that fails at its lab records
// that stage, and every stage it entered, by the names Stages lists.
func TestManifestStagesAreNamedStages(t *testing.T) {
	t.Parallel()
	m := noLabManifest(t)
	if m.Stage != StageLab || len(m.Stages) == 0 {
		t.Errorf("manifest stage %q, %d stages; want %q (where it failed) and the stages entered", m.Stage, len(m.Stages), StageLab)
	}
	for _, st := range m.Stages {
		if !IsStage(st.Stage) {
			t.Errorf("manifest stage %q is not one of Stages", st.Stage)
		}
	}
	for _, bad := range []string{"", "planning", "traffic2:x"} {
		if IsStage(bad) {
			t.Errorf("IsStage(%q) = true", bad)
		}
	}
	if !IsStage(StageTraffic + ":incast-0") {
		t.Error("a stage with its point after a colon is not recognised")
	}
}

// noLabManifest is the manifest of a run whose lab never opens.
func noLabManifest(t *testing.T) reports.Manifest {
	t.Helper()
	s, err := Parse([]byte("name: nolab\nlab: leafspine:2x2:2\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := (&Runner{OutDir: t.TempDir(), Labs: noLab{}}).Run(context.Background(), s)
	if out == nil || out.Dir == "" {
		t.Fatal("no run archive")
	}
	b, err := os.ReadFile(filepath.Join(out.Dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m reports.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
