package reports

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/labctl/labctl/collectors"
)

// An emulated point's figures come from the samples of its simulated
// traffic only: idle samples (tag idle=true), whether before the window,
// where they would be the baseline, or in its end margin, change nothing.
// Without the filter every figure below comes out different.
func TestIdleSamplesLeftOut(t *testing.T) {
	dir := t.TempDir()
	m := Manifest{RunID: "r1", Scenario: "idle", Outcome: "ok", Points: []PointMeta{
		{Name: "p", Pattern: "workload", Hosts: 2, Flows: 1, StartNs: t0, EndNs: t0 + 10*ms, TelemetryIntervalNs: ms, LinkGbps: 100}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "manifest.json"), string(b))
	var csv bytes.Buffer
	if err := WriteFlowsHeader(&csv); err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "flows.csv"), csv.String())
	idle := "," + collectors.TagIdle + "=" + collectors.IdleValue
	lp := lpWriter{t: t}
	p := "device=leaf1,port=1/0"
	lp.add("port", p+idle, t0-500*ms, "pfc3_tx=0i,drops=0i")
	lp.add("port", p, t0, "pfc3_tx=40i,drops=2i") // the twin's sample at the epoch
	lp.add("port", p, t0+5*ms, "pfc3_tx=45i,drops=2i")
	lp.add("port", p, t0+10*ms, "pfc3_tx=52i,drops=9i")
	lp.add("port", p+idle, t0+11*ms, "pfc3_tx=99i,drops=99i") // in the end margin
	lp.add("queue", p+",queue=3", t0+5*ms, "depth_bytes=4096i,watermark=4096i")
	lp.add("queue", p+",queue=3"+idle, t0+11*ms, "depth_bytes=1048576i,watermark=1048576i")
	lp.save(dir)
	s := analyseDir(t, dir)
	got := s.Points[0]
	if got.PFCPauseFrames != 12 || got.Drops != 7 {
		t.Errorf("PFC tx %d drops %d, want 52-40 = 12 and 9-2 = 7 from the traffic samples", got.PFCPauseFrames, got.Drops)
	}
	if got.PeakQueueBytes != 4096 || got.PeakWatermarkBytes != 4096 {
		t.Errorf("peak queue %d watermark %d, want 4096: the idle sample's must not count", got.PeakQueueBytes, got.PeakWatermarkBytes)
	}
	if got.TelemetryPoints != 4 {
		t.Errorf("%d telemetry points, want the 4 traffic samples", got.TelemetryPoints)
	}
}
