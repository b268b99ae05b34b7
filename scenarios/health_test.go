package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/reports"
)

// What makes a run degraded, and what only informs: a gap (broken stream
// or coalescing) or points InfluxDB lacks make the telemetry incomplete;
// an outage whose points were all replayed does not; every case leaves a
// warning naming device, path, span and counts, or the InfluxDB and its
// counts.
func TestTelemetryHealthDecidesDegraded(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	broken := collectors.Gap{Device: "leaf1", Target: "leaf1", Path: "/interfaces/interface[name=*]/state/counters", Reason: "stream broken: EOF",
		Since: t0, Until: t0.Add(time.Second), Interval: 100 * time.Millisecond, BrokeAt: t0.Add(100 * time.Millisecond), ResumedAt: t0.Add(900 * time.Millisecond)}
	coalesced := collectors.Gap{Device: "spine1", Target: "COUNTERS_DB", Path: "COUNTERS_DB:/COUNTERS/1/0", Reason: "target coalesced 3 samples",
		Since: t0, Until: t0.Add(400 * time.Millisecond), Duplicates: 3, Interval: 100 * time.Millisecond}
	outage := []collectors.Outage{{From: t0, To: t0.Add(10 * time.Second), Err: "connection refused"}}
	for _, tc := range []struct {
		name       string
		gaps       []collectors.Gap
		influx     *collectors.InfluxStats
		incomplete bool
		want       []string
	}{
		{"clean", nil, &collectors.InfluxStats{Written: 10}, false, nil},
		{"broken stream", []collectors.Gap{broken}, nil, true, []string{
			"telemetry gap: device leaf1 target leaf1 path /interfaces/interface[name=*]/state/counters: 04:00:00.000000 to 04:00:01.000000 UTC (1s): up to 9 samples missed at 100ms; stream down 800ms",
			"telemetry: 1 gaps in all, up to 9 samples missed"}},
		{"coalesced", []collectors.Gap{coalesced}, nil, true, []string{"device spine1 target COUNTERS_DB path COUNTERS_DB:/COUNTERS/1/0", "3 samples coalesced by the target"}},
		{"outage replayed", nil, &collectors.InfluxStats{Written: 10, Spooled: 4, Replayed: 4, Outages: outage}, false,
			[]string{"took no writes from 04:00:00.000 UTC, back at 04:00:10.000 UTC after 10s (connection refused); 4 points went to the spool, 4 of them replayed"}},
		{"spool left", nil, &collectors.InfluxStats{Written: 6, Spooled: 4, Pending: 4, Outages: outage[:1:1]}, true,
			[]string{UnreplayedPrefix + "4 points of 10 wait in the spool spool/influx"}},
		{"lost", nil, &collectors.InfluxStats{Written: 6, Lost: 4}, true, []string{"4 points neither written nor spooled"}},
		{"slow", nil, &collectors.InfluxStats{Written: 6, TimedOut: 2, Slow: 1, MaxWrite: 1500 * time.Millisecond}, false,
			[]string{"2 writes got no answer in time, 1 answered slowly (longest answered write 1.5s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := &reports.TelemetryMeta{}
			telemetryHealth(meta, tc.gaps, nil, nil, "")
			if tc.influx != nil {
				meta.Influx = &reports.InfluxMeta{URL: "http://influx:8086", Bucket: "labctl", Spool: "spool/influx", Stats: *tc.influx}
			}
			if meta.Incomplete() != tc.incomplete {
				t.Errorf("incomplete = %v, want %v", meta.Incomplete(), tc.incomplete)
			}
			ws := strings.Join(telemetryWarnings(meta), "\n")
			for _, w := range tc.want {
				if !strings.Contains(ws, w) {
					t.Errorf("warnings lack %q:\n%s", w, ws)
				}
			}
			if len(tc.want) == 0 && ws != "" {
				t.Errorf("warnings %q, want none", ws)
			}
		})
	}
}

// Sessions' books add up; the gaps the manifest keeps are bounded.
func TestMergeHealth(t *testing.T) {
	t.Parallel()
	many := make([]collectors.Gap, reports.MaxGapsKept)
	a, b := &reports.TelemetryMeta{}, &reports.TelemetryMeta{}
	telemetryHealth(a, many, nil, nil, "")
	telemetryHealth(b, many[:3], nil, nil, "")
	a.Influx = &reports.InfluxMeta{Stats: collectors.InfluxStats{Written: 5, Spooled: 2, Replayed: 2}}
	b.Influx = &reports.InfluxMeta{Stats: collectors.InfluxStats{Written: 7, Spooled: 3, Pending: 3}}
	mergeHealth(a, b)
	if a.GapCount != reports.MaxGapsKept+3 || len(a.Gaps) != reports.MaxGapsKept {
		t.Errorf("gap count %d, kept %d", a.GapCount, len(a.Gaps))
	}
	if st := a.Influx.Stats; st.Written != 12 || st.Spooled != 5 || st.Replayed != 2 || st.Pending != 3 {
		t.Errorf("merged stats %+v", st)
	}
	if !strings.Contains(strings.Join(telemetryWarnings(a), "\n"), "3 more gaps") {
		t.Errorf("warnings do not say gaps were left out: %q", telemetryWarnings(a))
	}
}
