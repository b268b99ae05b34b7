package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/provision"
)

// A provision record that cannot be written is an error, not a silently
// missing archive file.
func TestProvisionRecordWriteErrorsAreReported(t *testing.T) {
	rec := archive.Open(t.TempDir()).Provision("")
	pdir := rec.Path()
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := provision.Intent{Switch: &provision.QoSProfile{}}
	rep := &provision.Report{Plan: &provision.LabPlan{}, Drift: &provision.LabPlan{}}
	if err := writeReport(rec, in, rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.json", "switch-plan.json", "switch-apply.json", "switch-readback.json"} {
		if _, err := os.Stat(filepath.Join(pdir, f)); err != nil {
			t.Errorf("no %s", f)
		}
	}
	// a directory where a file must go: the write fails
	if err := os.Remove(filepath.Join(pdir, "switch-apply.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(pdir, "switch-apply.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(rec, in, rep); err == nil || !strings.Contains(err.Error(), "switch-apply.json") {
		t.Fatalf("got %v", err)
	}
}
