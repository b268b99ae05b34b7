package regress

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/reports"
)

// TestPromoteByFormat: a run of the previous manifest format (the golden
// format-1 archive) is promoted as it is and reads from the store; a run
// of a format this labctl does not know is refused with the archive's
// FormatError, naming the file.
func TestPromoteByFormat(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "baselines")
	if _, err := Promote("../../archive/testdata/format1-run", store, "old"); err != nil {
		t.Fatal(err)
	}
	dir, err := ResolveBaseline("old", store)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := reports.ReadSummary(dir); err != nil || len(s.Points) != 1 {
		t.Fatalf("promoted format-1 baseline: %v", err)
	}

	newer := filepath.Join(t.TempDir(), "r9")
	writeRun(t, newer, "r9", "ok", `{}`)
	if err := os.WriteFile(archive.Open(newer).Manifest(), []byte(`{"format":99,"run_id":"r9","outcome":"ok"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Promote(newer, store, "new")
	var fe *archive.FormatError
	if !errors.As(err, &fe) || fe.Found != 99 || fe.File != archive.Open(newer).Manifest() {
		t.Fatalf("promote of a format-99 run: %v, want a FormatError naming its manifest", err)
	}
}
