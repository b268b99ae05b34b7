package perftest

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestFailureAfterRows: a table followed (or preceded) by perftest's own
// error lines is a failed run, reported with the line that says so.
func TestFailureAfterRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		kind ErrorKind
		text string // the line the error must name
	}{
		{"write_bw_all_completion_error.txt", CompletionError, "Completion with error at client"},
		{"write_bw_all_stderr_first.txt", CompletionError, "Completion with error at client"},
		{"write_bw_below_limit.txt", Unknown, "Error: BW result is below bw limit"},
		{"send_bw_server_starved.txt", Unknown, "Did not get Message for 120 Seconds, exiting.."},
		{"write_bw_all_couldnt.txt", Unknown, "Couldn't allocate MR"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseBW(string(b))
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("got report %+v, err %v; want a ToolError", r, err)
			}
			if te.Kind != tc.kind || te.Text != tc.text {
				t.Errorf("got %s %q, want %s %q", te.Kind, te.Text, tc.kind, tc.text)
			}
			lines := strings.Split(string(b), "\n")
			if te.Line < 1 || te.Line > len(lines) || strings.TrimSpace(lines[te.Line-1]) != tc.text {
				t.Errorf("line %d does not hold %q", te.Line, tc.text)
			}
			if !strings.Contains(te.Error(), tc.text) {
				t.Errorf("error %q does not name the line", te.Error())
			}
		})
	}
}

// TestTableWithoutErrorsStillParses guards the other side: the same tables
// without the error lines are good runs.
func TestTableWithoutErrorsStillParses(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/write_bw_all_completion_error.txt")
	if err != nil {
		t.Fatal(err)
	}
	good, _, _ := strings.Cut(string(b), " Completion with error")
	r, err := ParseBW(good)
	if err != nil || len(r.Rows) != 3 {
		t.Fatalf("table without error lines: %+v %v", r, err)
	}
}
