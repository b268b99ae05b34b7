package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// totals are the flows and telemetry points a summary counted.
func totals(s *Summary) (flows, points int) {
	for _, p := range s.Points {
		flows += p.Flows
		points += p.TelemetryPoints
	}
	return flows, points
}

// TestTornLastLineIsSkippedAndReported: a crash mid-append leaves the last
// line of flows.csv or a .lp file without its newline, cut anywhere. The
// report still renders, without that line's record, and warns naming the
// file.
func TestTornLastLineIsSkippedAndReported(t *testing.T) {
	t.Parallel()
	whole, err := WriteRunReports(synthRun(t))
	if err != nil {
		t.Fatal(err)
	}
	wantFlows, wantPoints := totals(whole)
	for _, file := range []string{"flows.csv", filepath.Join("telemetry", "port.lp")} {
		// keep: bytes of the last line left (its newline is always gone)
		for _, keep := range []int{1, 2, 7, -1} {
			t.Run(fmt.Sprintf("%s/keep=%d", file, keep), func(t *testing.T) {
				t.Parallel()
				dir := synthRun(t)
				path := filepath.Join(dir, file)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				start := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
				end := len(b) - 1
				if keep > 0 {
					end = start + keep
				}
				if err := os.WriteFile(path, b[:end], 0o644); err != nil {
					t.Fatal(err)
				}
				s, err := WriteRunReports(dir)
				if err != nil {
					t.Fatalf("report of an archive with a torn last line: %v", err)
				}
				if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], path) || !strings.Contains(s.Warnings[0], "incomplete") {
					t.Fatalf("warnings %q, want one naming %s as incomplete", s.Warnings, path)
				}
				flows, points := totals(s)
				if file == "flows.csv" && (flows != wantFlows-1 || points != wantPoints) {
					t.Errorf("flows %d points %d, want %d (the torn row skipped) and %d", flows, points, wantFlows-1, wantPoints)
				}
				if file != "flows.csv" && (flows != wantFlows || points != wantPoints-1) {
					t.Errorf("flows %d points %d, want %d and %d (the torn sample skipped)", flows, points, wantFlows, wantPoints-1)
				}
				for _, name := range []string{"report.html", "summary.json"} {
					out, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(string(out), filepath.Base(file)) || !strings.Contains(string(out), "incomplete") {
						t.Errorf("%s does not show the warning about %s", name, file)
					}
				}
			})
		}
	}
}

// TestTornLineInsideIsAnError: only the last line may be torn; a cut line
// with lines after it is corruption, reported with file:line.
func TestTornLineInsideIsAnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, cut string }{
		{"flows.csv", "r1,incast,5,"},
		{filepath.Join("telemetry", "port.lp"), "port,device=leaf1,port=1/0 pfc3_tx="},
	} {
		dir := synthRun(t)
		path := filepath.Join(dir, tc.file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.IndexByte(b, '\n') + 1 // after the first line
		b = append(b[:i:i], append([]byte(tc.cut+"\n"), b[i:]...)...)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = WriteRunReports(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(tc.file)+":2") {
			t.Errorf("%s with a cut line 2: err %v, want one naming %s:2", tc.file, err, filepath.Base(tc.file))
		}
	}
}
