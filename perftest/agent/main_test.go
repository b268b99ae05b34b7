package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/perftest"
)

// TestMainCommandLine: usage errors exit 2; a host's part run by another
// host is refused; a host with nothing to do writes its (empty) result.
func TestMainCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	part := filepath.Join(dir, "h1.schedule.json")
	b, _ := json.Marshal(&perftest.Schedule{ID: "run/pt", Epoch: time.Now(), Host: "h1", PointFlows: 3, Flows: []perftest.Flow{}})
	if err := os.WriteFile(part, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res", "h1.result.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", nil, 2, "usage: labctl-agent run"},
		{"missing flags", []string{"run", "--schedule", part}, 2, "are required"},
		{"another host's part", []string{"run", "--schedule", part, "--host", "h2", "--out", out}, 1, "it is host h1's part, not h2's"},
		{"no such schedule", []string{"run", "--schedule", part + ".x", "--host", "h1", "--out", out}, 1, "no such file"},
		{"nothing to do", []string{"run", "--schedule", part, "--host", "h1", "--out", out}, 0, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), tc.args, LocalEnv(&stdout, &stderr))
		if code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.name, code, stderr.String(), tc.code, tc.msg)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head, err := ReadResult(f, func(*Result, perftest.FlowRecord) error { return nil })
	if err != nil || head.Host != "h1" || head.ScheduleID != "run/pt" {
		t.Errorf("result: %+v %v", head, err)
	}
}

// TestResultGzippedByName: --out NAME.gz writes a gzip stream (its magic
// bytes on disk) that OpenResult reads back; a plain name stays plain.
func TestResultGzippedByName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	part := filepath.Join(dir, "h1.schedule.json")
	b, _ := json.Marshal(&perftest.Schedule{ID: "run/pt", Epoch: time.Now(), Host: "h1", PointFlows: 1, Flows: []perftest.Flow{}})
	if err := os.WriteFile(part, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		gzip bool
	}{{"h1.result.json.gz", true}, {"h1.result.json", false}} {
		out := filepath.Join(dir, tc.name)
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"run", "--schedule", part, "--host", "h1", "--out", out}, LocalEnv(&stdout, &stderr)); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr.String())
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if isGzip := bytes.HasPrefix(raw, []byte{0x1f, 0x8b}); isGzip != tc.gzip {
			t.Errorf("%s: gzip magic %v, want %v", tc.name, isGzip, tc.gzip)
		}
		rc, err := OpenResult(out)
		if err != nil {
			t.Fatal(err)
		}
		head, err := ReadResult(rc, func(*Result, perftest.FlowRecord) error { return nil })
		rc.Close()
		if err != nil || head.Host != "h1" || head.ScheduleID != "run/pt" {
			t.Errorf("%s: result %+v %v", tc.name, head, err)
		}
	}
}
