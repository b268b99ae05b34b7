package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/scenarios"
)

// runEmulatedYAML parses the scenario text and runs it with runEmulated.
func runEmulatedYAML(t *testing.T, text string, pointTimeout time.Duration) *scenarios.Outcome {
	t.Helper()
	s, err := scenarios.Parse([]byte(text), "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return runEmulated(t, s, pointTimeout)
}

// runEmulated runs s on emulated labs started per lab the run names, with
// a stand-in agent, each point within pointTimeout (0: the runner's
// default) and the whole run within 5 minutes, and fails the test unless
// the run succeeds.
func runEmulated(t *testing.T, s *scenarios.Scenario, pointTimeout time.Duration) *scenarios.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := &scenarios.Runner{Labs: &emulatedLabs{t: t}, OutDir: t.TempDir(), AgentPath: fakeAgent(t), PointTimeout: pointTimeout}
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// reportPage is the run's report.html.
func reportPage(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkReportHas fails the test for each of wants report.html lacks.
func checkReportHas(t *testing.T, dir string, wants ...string) {
	t.Helper()
	page := reportPage(t, dir)
	for _, want := range wants {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// reportTable is the table of report.html under <h2>heading</h2>; the
// test stops if the report has no such heading.
func reportTable(t *testing.T, dir, heading string) string {
	t.Helper()
	_, tbl, ok := strings.Cut(reportPage(t, dir), "<h2>"+heading+"</h2>")
	if !ok {
		t.Fatalf("report.html has no %s table", heading)
	}
	tbl, _, _ = strings.Cut(tbl, "</table>")
	return tbl
}
