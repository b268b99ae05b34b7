package reports

import (
	"testing"

	"github.com/labctl/labctl/archive"
)

// format1Run is an archive labctl wrote before manifests had a format
// (archive/testdata/format1-run: one 2-to-1 incast point).
const format1Run = "../archive/testdata/format1-run"

// TestLoadFormat1Run: a format-1 archive still loads and analyses to the
// flow counts and FCTs its own summary.json recorded when it was written.
func TestLoadFormat1Run(t *testing.T) {
	t.Parallel()
	run, err := LoadRun(format1Run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Manifest.Format != 1 {
		t.Errorf("manifest format %d, want 1", run.Manifest.Format)
	}
	if run.Manifest.Format == archive.FormatVersion {
		t.Fatal("the golden archive is of the current format: it no longer tests reading the previous one")
	}
	got, err := Analyse(run)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadSummary(format1Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 1 || len(want.Points) != 1 {
		t.Fatalf("points: analysed %d, recorded %d; want 1", len(got.Points), len(want.Points))
	}
	g, w := got.Points[0], want.Points[0]
	if g.Flows != 2 || g.Flows != w.Flows || g.FCT != w.FCT {
		t.Errorf("analysed flows %d FCT %+v; recorded flows %d FCT %+v", g.Flows, g.FCT, w.Flows, w.FCT)
	}
	if g.TelemetryPoints == 0 || g.TelemetryPoints != w.TelemetryPoints {
		t.Errorf("telemetry points: analysed %d, recorded %d", g.TelemetryPoints, w.TelemetryPoints)
	}
}
