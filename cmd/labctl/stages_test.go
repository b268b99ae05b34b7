package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/labctl/labctl/scenarios"
)

// TestRunHelpListsEveryStage: run --help names every pipeline stage with
// its description, on a line of its own, in the order of scenarios.Stages.
func TestRunHelpListsEveryStage(t *testing.T) {
	out, _, err := labctl(t, t.TempDir(), "run", "--help")
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, st := range scenarios.Stages() {
		re := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(st.Name) + `\s+` + regexp.QuoteMeta(st.About) + `$`)
		loc := re.FindStringIndex(out[at:])
		if loc == nil {
			t.Errorf("run --help lacks stage %q (%s) after the stages before it", st.Name, st.About)
			continue
		}
		at += loc[1]
	}
	if t.Failed() {
		t.Log(out)
	}
	if strings.Contains(out, "plan -> provision") {
		t.Error("run --help still lists stages by hand")
	}
}
