package regress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/reports"
)

// A promoted baseline is a frozen copy of what a verdict needs from a run
// (summary.json and manifest.json) under <store>/<name>/, so that later
// clean-ups of runs/ cannot change what tonight is compared with.
// Promoting again under the same name replaces it; the previous one is
// kept as <name>/previous/.

// baselineFiles are copied from the run archive: the path of each in a
// run directory or a baseline.
func baselineFiles() []func(archive.Dir) string {
	return []func(archive.Dir) string{archive.Dir.Summary, archive.Dir.Manifest}
}

// Promotion records where a baseline came from.
type Promotion struct {
	Name     string    `json:"name"`
	RunDir   string    `json:"run_dir"`
	RunID    string    `json:"run_id"`
	Promoted time.Time `json:"promoted"`
}

var baselineName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Promote copies runDir's summary and manifest into store/name.
func Promote(runDir, store, name string) (*Promotion, error) {
	if !baselineName.MatchString(name) {
		return nil, fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-'", name)
	}
	run, err := reports.LoadRun(runDir, nil) // reads the manifest; the rest on demand
	if err != nil {
		return nil, fmt.Errorf("promote %s: %w", runDir, err)
	}
	m := run.Manifest
	if m.Outcome != "ok" { // scenarios.OutcomeOK
		return nil, fmt.Errorf("promote %s: run outcome is %q; only a complete run can be a baseline", runDir, m.Outcome)
	}
	dir := filepath.Join(store, name)
	tmp := dir + ".new"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	for _, f := range baselineFiles() {
		b, err := os.ReadFile(f(archive.Open(runDir)))
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("promote %s: %w", runDir, err)
		}
		if err := os.WriteFile(f(archive.Open(tmp)), b, 0o644); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("baseline %s: %w", name, err)
		}
	}
	abs, _ := filepath.Abs(runDir)
	p := &Promotion{Name: name, RunDir: abs, RunID: m.RunID, Promoted: time.Now().UTC()}
	pb, _ := json.MarshalIndent(p, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "promoted.json"), append(pb, '\n'), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	if _, err := os.Stat(dir); err == nil {
		prev := filepath.Join(tmp, "previous")
		if err := os.Rename(dir, prev); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("baseline %s: keep previous: %w", name, err)
		}
		_ = os.RemoveAll(filepath.Join(prev, "previous")) // one generation is enough
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	return p, nil
}

// ResolveBaseline returns the directory holding the baseline's summary:
// ref is a run archive directory, or the name of a promoted baseline in
// store.
func ResolveBaseline(ref, store string) (string, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		return ref, nil
	}
	if baselineName.MatchString(ref) {
		dir := filepath.Join(store, ref)
		if _, err := os.Stat(archive.Open(dir).Summary()); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("baseline %s: %w", ref, err)
		}
	}
	return "", fmt.Errorf("baseline %q is neither a run directory nor a promoted baseline in %s ('labctl regress promote RUN --name NAME' makes one)", ref, store)
}
