package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/archive"
)

// TestRunsListsEveryManifestFormat: labctl runs lists a run of the
// previous manifest format (the golden format-1 archive) as it was, and a
// run of a format it does not know by its directory, saying why it cannot
// read it.
func TestRunsListsEveryManifestFormat(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	old, err := os.ReadFile(archive.Open("../../archive/testdata/format1-run").Manifest())
	if err != nil {
		t.Fatal(err)
	}
	for id, doc := range map[string][]byte{"old": old, "new": []byte(`{"format":99,"run_id":"new","outcome":"ok"}`)} {
		d, err := archive.Create(filepath.Join(out, id))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(d.Manifest(), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list, err := listRuns(out)
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]runEntry{}
	for _, e := range list {
		byDir[filepath.Base(e.Dir)] = e
	}
	if e := byDir["old"]; e.RunID != "tiny-20261125-070707-31756d" || e.Outcome != "ok" || e.Scenario != "tiny" {
		t.Errorf("format-1 run listed as %+v", e)
	}
	e := byDir["new"]
	if e.RunID != "new" || e.Outcome != "unknown" || !strings.Contains(e.Note, "manifest format 99") || !strings.Contains(e.Note, filepath.Join(out, "new", "manifest.json")) {
		t.Errorf("format-99 run listed as %+v", e)
	}
}
