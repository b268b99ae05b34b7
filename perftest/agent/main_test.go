package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/perftest"
)

// TestMainCommandLine: usage errors exit 2; a host's part run by another
// host, or one whose flows are not as many as it announces, is refused; a host with nothing to do writes its (empty) result.
func TestMainCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	part := filepath.Join(dir, "h1.schedule.json")
	b, _ := json.Marshal(&perftest.Schedule{ID: "run/pt", Epoch: time.Now(), Host: "h1", PointFlows: 3, Flows: []perftest.Flow{}})
	if err := os.WriteFile(part, b, 0o600); err != nil {
		t.Fatal(err)
	}
	miscounted := filepath.Join(dir, "h1.miscounted.json")
	b, _ = json.Marshal(&perftest.Schedule{ID: "run/pt", Epoch: time.Now(), Host: "h1", PointFlows: 3, HostFlows: 2, Flows: []perftest.Flow{{ID: 1, Src: "h1", Dst: "h2"}}})
	if err := os.WriteFile(miscounted, b, 0o600); err != nil {
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
		{"a part that miscounts its flows", []string{"run", "--schedule", miscounted, "--host", "h1", "--out", out}, 1, "it announces 2 flows and holds 1"},
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

// countingCompressors is a Compressors that keeps one writer and counts
// what it lends and makes.
type countingCompressors struct {
	kept        *gzip.Writer
	lent, made  int
	outstanding int
}

func (c *countingCompressors) Get(w io.Writer) io.WriteCloser {
	c.lent++
	c.outstanding++
	if c.kept != nil {
		zw := c.kept
		c.kept = nil
		zw.Reset(w)
		return zw
	}
	c.made++
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	return zw
}

func (c *countingCompressors) Put(zw io.WriteCloser) { c.outstanding--; c.kept = zw.(*gzip.Writer) }

// TestResultCompressorsAreLentAndReturned: with Env.Compressors a result
// is gzipped by a lent writer, given back once written, and the next
// result reuses it; a result with nothing written (Execute wrote nothing)
// is still a valid gzip stream.
func TestResultCompressorsAreLentAndReturned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &countingCompressors{}
	sched := &perftest.Schedule{ID: "run/pt", Host: "h1"}
	for i, body := range []string{`{"host":"h1","records":[],"servers":[],"late":0,"max_lag_ns":0}`, "", `{"host":"h2"}`} {
		env := Env{Compressors: c, Execute: func(_ context.Context, _ *perftest.Schedule, _ Options, w io.Writer) error {
			_, err := io.WriteString(w, body)
			return err
		}}
		out := filepath.Join(dir, fmt.Sprintf("r%d.json.gz", i))
		if err := executeTo(context.Background(), env, out, sched, Options{}); err != nil {
			t.Fatal(err)
		}
		rc, err := OpenResult(out)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(got) != body {
			t.Errorf("result %d: read %q (%v), want %q", i, got, err, body)
		}
	}
	if c.lent != 3 || c.made != 1 || c.outstanding != 0 {
		t.Errorf("lent %d, made %d, %d not given back; want 3, 1, 0", c.lent, c.made, c.outstanding)
	}
}
