package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A degraded run's report says so, and why, before any figure: in
// Markdown and HTML alike, and WriteRunReportsAs writes the outcome the
// run ends with while the manifest on disk still says "running".
func TestDegradedOutcomeAndWarningsComeFirst(t *testing.T) {
	t.Parallel()
	dir := synthRun(t)
	mpath := filepath.Join(dir, "manifest.json")
	var m Manifest
	b, _ := os.ReadFile(mpath)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m.Outcome = "running"
	m.Warnings = []string{"telemetry gap: device leaf1 target COUNTERS_DB path COUNTERS_DB:/COUNTERS/*"}
	b, _ = json.Marshal(m)
	putFile(t, mpath, string(b))

	s, err := WriteRunReportsAs(dir, func(m *Manifest) { m.Outcome = "degraded" })
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome != "degraded" || len(s.Warnings) == 0 || s.Warnings[0] != m.Warnings[0] {
		t.Fatalf("summary outcome %q, warnings %q", s.Outcome, s.Warnings)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for format, text := range map[string]string{"html": string(html), "md": md.String()} {
		first := strings.Index(text, "Points: flows")
		for _, want := range []string{"degraded", "Degraded: every point ran", "telemetry gap: device leaf1"} {
			if i := strings.Index(text, want); i < 0 || i > first {
				t.Errorf("%s: %q is not before the first table", format, want)
			}
		}
		if strings.Contains(text, "running") {
			t.Errorf("%s says running", format)
		}
	}
}
