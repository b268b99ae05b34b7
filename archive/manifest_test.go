package archive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testManifest stands in for reports.Manifest (which archive must not
// import): a type embedding Header, with the fields the tests look at.
type testManifest struct {
	Header
	RunID   string    `json:"run_id"`
	Outcome string    `json:"outcome"`
	Stage   string    `json:"stage"`
	Started time.Time `json:"started"`
	Points  []struct {
		Name  string `json:"name"`
		Flows int    `json:"flows"`
	} `json:"points"`
}

func TestManifestRoundTrip(t *testing.T) {
	t.Parallel()
	d, err := Create(filepath.Join(t.TempDir(), "r1"))
	if err != nil {
		t.Fatal(err)
	}
	in := testManifest{RunID: "r1", Outcome: "running", Stage: "traffic:p1", Started: time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)}
	in.Format = 1 // whatever the caller had: the writer writes the current format
	if err := WriteManifest(d, &in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(d.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"format\": 2,\n") {
		t.Errorf("manifest does not lead with its format:\n%.80s", b)
	}
	var out testManifest
	if err := ReadManifest(d, &out); err != nil {
		t.Fatal(err)
	}
	if out.Format != FormatVersion || out.RunID != in.RunID || out.Stage != in.Stage || !out.Started.Equal(in.Started) {
		t.Errorf("read back %+v, wrote %+v", out, in)
	}
}

// TestReadFormat1: testdata/format1-run was written by labctl before
// manifests had a format (a one-point incast on leafspine:1x2:2); it still
// reads, as format 1.
func TestReadFormat1(t *testing.T) {
	t.Parallel()
	d := Open("testdata/format1-run")
	var m testManifest
	if err := ReadManifest(d, &m); err != nil {
		t.Fatal(err)
	}
	if m.Format != 1 {
		t.Errorf("format %d, want 1 for a manifest without the field", m.Format)
	}
	if m.RunID != "tiny-20261125-070707-31756d" || m.Outcome != "ok" || len(m.Points) != 1 || m.Points[0].Flows != 2 {
		t.Errorf("format-1 manifest read as %+v", m)
	}
	files, err := d.TelemetryFiles()
	if err != nil || len(files) == 0 {
		t.Errorf("format-1 archive: telemetry files %v, %v", files, err)
	}
	for _, f := range []string{d.Plan(), d.Flows(), d.Summary(), d.Schedule(m.Points[0].Name), d.AgentResult(m.Points[0].Name, "h1")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("format-1 archive: %v", err)
		}
	}
}

func TestReadManifestFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		format    int   // read as, when it reads
		bad       int   // the format a *FormatError names
		other     error // another error it must satisfy
	}{
		{name: "no field", doc: `{"run_id":"r"}`, format: 1},
		{name: "format 1", doc: `{"format":1,"run_id":"r"}`, format: 1},
		{name: "current", doc: `{"format":2,"run_id":"r"}`, format: 2},
		{name: "newer", doc: `{"format":3,"run_id":"r"}`, bad: 3},
		{name: "far newer", doc: `{"format":99,"run_id":"r"}`, bad: 99},
		{name: "zero", doc: `{"format":0,"run_id":"r"}`, bad: 0},
		{name: "not a number", doc: `{"format":"2"}`},
		{name: "missing", other: fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Open(t.TempDir())
			if tc.doc != "" {
				if err := os.WriteFile(d.Manifest(), []byte(tc.doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var m testManifest
			err := ReadManifest(d, &m)
			var fe *FormatError
			switch {
			case tc.format != 0:
				if err != nil || m.Format != tc.format || m.RunID != "r" {
					t.Errorf("read %+v, %v; want format %d", m, err, tc.format)
				}
			case tc.other != nil:
				if !errors.Is(err, tc.other) {
					t.Errorf("error %v, want %v", err, tc.other)
				}
			case tc.doc == `{"format":"2"}`:
				if err == nil || errors.As(err, &fe) || !strings.Contains(err.Error(), d.Manifest()) {
					t.Errorf("error %v, want a decode error naming the file", err)
				}
			default:
				if !errors.As(err, &fe) || fe.Found != tc.bad {
					t.Fatalf("error %v, want a FormatError for format %d", err, tc.bad)
				}
				for _, want := range []string{d.Manifest(), "format " + strconv.Itoa(tc.bad), "formats 1 to 2"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			}
		})
	}
}
