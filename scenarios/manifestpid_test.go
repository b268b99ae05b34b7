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
	s, err := Parse([]byte("name: pid\nlab: leafspine:2x2:2\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"), "s.yaml")
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
	host, pid, start := lease.Self()
	if m.Host != host || m.PID != pid || m.PIDStart != start || start == 0 {
		t.Errorf("manifest names %s pid %d start %d, want %s pid %d start %d", m.Host, m.PID, m.PIDStart, host, pid, start)
	}
}
