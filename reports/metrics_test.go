package reports

import "testing"

func TestMetricsGroupRepetitionsAndSkipFailedPoints(t *testing.T) {
	pt := func(name string, rep int, mean float64, status string) PointSummary {
		return PointSummary{
			Name: name, Scheme: "ecmp", Status: status, Flows: 10,
			Params:      map[string]any{"scheme": "ecmp", "load": 0.5, ParamRepetition: rep},
			FCT:         FCTSummary{Count: 10, Mean: mean, P99: int64(2 * mean)},
			BySize:      []BucketSummary{{Bucket: "<100KB", Flows: 4, FCT: FCTSummary{Count: 4, Mean: mean / 2}}},
			GoodputGbps: 90, DurationNs: 1e9, RateSpanNs: 1e9, PFCPauseFrames: 500, PFCPauseTxPerS: 500,
			PFCByTier: []TierPFC{{Tier: "leaf", TxPerS: 400}, {Tier: "spine", TxPerS: 100}},
		}
	}
	s := &Summary{Points: []PointSummary{
		pt("w/rep0", 0, 100, StatusOK),
		pt("w/rep1", 1, 120, StatusOK),
		pt("w/rep2", 2, 999, StatusFailed),
	}}
	got := map[string][]float64{}
	groups := map[string]bool{}
	for _, x := range Metrics(s) {
		got[x.Name+"|"+x.Bucket] = x.Values
		groups[x.Group] = true
	}
	if len(groups) != 1 {
		t.Fatalf("repetitions in %d groups: %v", len(groups), groups)
	}
	for k, want := range map[string][]float64{
		"fct.mean|":               {100, 120},
		"fct.p99|":                {200, 240},
		"fct.mean|<100KB":         {50, 60},
		"goodput_gbps|":           {90, 90},
		"pfc_pause_tx_per_s|":     {500, 500},
		"pfc_pause_tx_per_s|leaf": {400, 400},
	} {
		if g := got[k]; len(g) != len(want) || g[0] != want[0] || g[1] != want[1] {
			t.Errorf("%s = %v, want %v (the failed repetition must not count)", k, g, want)
		}
	}
	if _, ok := got["out_of_order_packets|"]; ok {
		t.Error("out_of_order_packets without RNIC counters must be absent, not 0")
	}
	if _, ok := got["slowdown.mean|"]; ok {
		t.Error("slowdown without ideal FCTs must be absent")
	}
}
