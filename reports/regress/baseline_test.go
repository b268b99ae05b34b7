package regress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRun(t *testing.T, dir, id, outcome, summary string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"run_id":"`+id+`","outcome":"`+outcome+`"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644)
}

func TestPromoteAndResolve(t *testing.T) {
	tmp := t.TempDir()
	store := filepath.Join(tmp, "baselines")
	run1, run2 := filepath.Join(tmp, "r1"), filepath.Join(tmp, "r2")
	writeRun(t, run1, "r1", "ok", `{"v":1}`)
	writeRun(t, run2, "r2", "ok", `{"v":2}`)
	p, err := Promote(run1, store, "nightly")
	if err != nil || p.RunID != "r1" {
		t.Fatalf("promote: %v %+v", err, p)
	}
	// The baseline is a copy: the run can go away.
	os.RemoveAll(run1)
	dir, err := ResolveBaseline("nightly", store)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "summary.json")); string(b) != `{"v":1}` {
		t.Errorf("baseline summary %s", b)
	}
	if _, err := Promote(run2, store, "nightly"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(store, "nightly", "summary.json")); string(b) != `{"v":2}` {
		t.Errorf("re-promoted summary %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(store, "nightly", "previous", "summary.json")); string(b) != `{"v":1}` {
		t.Errorf("previous baseline not kept: %s", b)
	}
	if d, err := ResolveBaseline(run2, store); err != nil || d != run2 {
		t.Errorf("a run directory resolves to itself: %v %v", d, err)
	}
	if _, err := ResolveBaseline("nope", store); err == nil || !strings.Contains(err.Error(), "promote") {
		t.Errorf("unknown baseline: %v", err)
	}
}

func TestPromoteRefusesBadRunsAndNames(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad")
	writeRun(t, bad, "x", "failed", `{}`)
	if _, err := Promote(bad, tmp, "n"); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("a failed run was promoted: %v", err)
	}
	if _, err := Promote(bad, tmp, "../escape"); err == nil {
		t.Error("a name with a path was accepted")
	}
}
