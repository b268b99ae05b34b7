package reports

import (
	"testing"

	"github.com/labctl/labctl/collectors"
)

// The PFC-by-tier table's paused time: a switch tier sums its ports'
// pfc<n>_rx_pause_duration_us over the window; the host tier sums the
// RNICs' rx_prio<n>_pause_duration (rnic_ethtool), the last sample being
// the read after the traffic, and counts their pause frames; a tier whose
// switches report no duration has none (n/a, not 0).
func TestPausedTimePerTier(t *testing.T) {
	lab := genLab(t, "leafspine:2x2:2@100")
	m := Manifest{RunID: "r", Lab: lab, Points: []PointMeta{{Name: "p", Pattern: "incast", StartNs: t0, EndNs: t0 + ms}}}
	leaf := map[string]string{collectors.TagDevice: "leaf1", collectors.TagPort: "1/0"}
	spine := map[string]string{collectors.TagDevice: "spine1", collectors.TagPort: "1/0"}
	nic := map[string]string{collectors.TagHost: "h1", collectors.TagDevice: "mlx5_0", collectors.TagNetdev: "ens1f0"}
	eth := func(ts int64, frames, us uint64) collectors.Point {
		return tel(collectors.MeasEthtool, nic, ts, map[string]any{"tx_prio3_pause": frames, "rx_prio3_pause": 2 * frames,
			"rx_prio3_pause_duration": us, "rx_prio3_marked": uint64(9)})
	}
	pts := []collectors.Point{
		tel(collectors.MeasPort, leaf, t0-ms, map[string]any{"pfc3_tx": uint64(100), "pfc3_rx_pause_duration_us": uint64(1000)}),
		tel(collectors.MeasPort, leaf, t0+ms/2, map[string]any{"pfc3_tx": uint64(104), "pfc3_rx_pause_duration_us": uint64(1030)}),
		tel(collectors.MeasPort, leaf, t0+ms, map[string]any{"pfc3_tx": uint64(107), "pfc3_rx_pause_duration_us": uint64(1042)}),
		tel(collectors.MeasPort, spine, t0, map[string]any{"pfc3_tx": uint64(0)}),
		tel(collectors.MeasPort, spine, t0+ms, map[string]any{"pfc3_tx": uint64(5)}),
		eth(t0-1, 10, 500),        // read before the traffic
		eth(t0+ms/3, 12, 510),     // polled during it
		eth(t0+ms+10*ms, 20, 560), // read after it, past the switch window
	}
	s, err := Analyse(&Run{Manifest: m, Flows: rowsSource([]FlowRow{okRow("p", 1, "h1", "h3", 1_000_000, t0, t0+ms)}), Telemetry: pointsSource(pts)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]TierPFC{}
	for _, tp := range s.Points[0].PFCByTier {
		got[tp.Tier] = tp
	}
	if l := got["leaf"]; l.Tx != 7 || l.PauseUs == nil || *l.PauseUs != 42 {
		t.Errorf("leaf %+v (paused %v), want 7 frames and 42 µs", l, deref(l.PauseUs))
	}
	if sp := got["spine"]; sp.Tx != 5 || sp.PauseUs != nil {
		t.Errorf("spine %+v, want 5 frames and no paused time (n/a)", sp)
	}
	if h := got[TierHost]; h.Tx != 10 || h.Rx != 20 || h.PauseUs == nil || *h.PauseUs != 60 {
		t.Errorf("host %+v (paused %v), want 10 sent, 20 received, 60 µs", h, deref(h.PauseUs))
	}
	if s.Points[0].PFCPauseFrames != 12 {
		t.Errorf("switch pause frames %d, want 12 (hosts' are their own tier)", s.Points[0].PFCPauseFrames)
	}
}
