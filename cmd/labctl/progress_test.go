package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunWithoutTerminalPrintsJSONProgress: with no terminal, `labctl run`
// tells a nightly job's log where it is, as JSON lines on stderr (stages,
// point i/n, ETA once a point has finished), while stdout keeps its one
// JSON line.
func TestRunWithoutTerminalPrintsJSONProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	stdout, stderr, err := labctl(t, t.TempDir(), "run", "testdata/incast-3to1.yaml", "--lab", "leafspine:1x2:2@100", "--out", t.TempDir())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 1 || !json.Valid([]byte(lines[0])) {
		t.Fatalf("stdout must be one JSON line: %q", stdout)
	}
	var stages []string
	var starts, finished []progressLine
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var l progressLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Event == "" || l.Time.IsZero() {
			t.Fatalf("stderr line is not a progress line: %q (%v)", sc.Text(), err)
		}
		switch l.Event {
		case "stage":
			stages = append(stages, l.Stage)
		case "point":
			starts = append(starts, l)
		case "point_done":
			finished = append(finished, l)
		}
	}
	if len(starts) != 2 || len(finished) != 2 {
		t.Fatalf("want 2 points started and done, got %+v / %+v", starts, finished)
	}
	for i, l := range starts {
		if l.Index != i+1 || l.Total != 2 || l.Point != []string{"incast/rep0", "incast/rep1"}[i] {
			t.Errorf("point line %d: %+v", i, l)
		}
	}
	if starts[0].ETA != nil || starts[1].ETA == nil || *starts[1].Done != 1 {
		t.Errorf("ETA must come once a point has finished: %+v, %+v", starts[0], starts[1])
	}
	if got := strings.Join(stages, ","); !strings.Contains(got, "plan") || !strings.Contains(got, "traffic") || !strings.Contains(got, "analyse") {
		t.Errorf("stages %s", got)
	}
}
