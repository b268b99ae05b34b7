package scenarios

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/reports"
)

// OutcomeDegraded: every point ran, but telemetry is incomplete: a gap in
// the archive (a broken gNMI stream, samples a target coalesced, counter
// values that are no numbers) or points
// InfluxDB does not have (still in the spool, or lost), or switch queue
// watermarks that could not be cleared before a point. The manifest's
// warnings say which device, path and time span; --strict makes it a
// failure.
const OutcomeDegraded = "degraded"

// ErrDegraded is what a strict caller returns for a degraded run.
var ErrDegraded = fmt.Errorf("run degraded: telemetry incomplete")

// UnreplayedPrefix starts the warning about points waiting in the spool;
// `labctl telemetry replay` drops it once they are written.
const UnreplayedPrefix = "telemetry not in InfluxDB: "

// telemetryHealth records in meta what the collectors lost: the gaps, and
// what became of the points sent to InfluxDB (inf may be nil).
func telemetryHealth(meta *reports.TelemetryMeta, gaps []collectors.Gap, inf *collectors.InfluxSink, cfg *collectors.InfluxConfig, runDir string) {
	for _, g := range gaps {
		meta.GapCount++
		meta.MissedSamples += g.Missed()
		meta.UnreadableValues += int64(g.Unreadable)
	}
	metas := gapMetas(gaps) // gapsummary.go
	meta.Gaps = append(meta.Gaps, metas[:min(len(metas), max(reports.MaxGapsKept-len(meta.Gaps), 0))]...)
	if inf != nil {
		spool, err := filepath.Rel(runDir, inf.SpoolDir())
		if err != nil {
			spool = inf.SpoolDir()
		}
		meta.Influx = &reports.InfluxMeta{URL: cfg.URL, Org: cfg.Org, Bucket: cfg.Bucket, Spool: spool, Stats: inf.Stats()}
	}
}

// noteInflux records in the manifest, as soon as collection starts, where
// telemetry goes besides the archive: a run that crashes leaves a spool
// that `labctl telemetry replay` can then write without being told where.
func (st *runState) noteInflux() {
	cfg := st.r.Influx
	if cfg == nil || (st.m.Telemetry != nil && st.m.Telemetry.Influx != nil) {
		return
	}
	if st.m.Telemetry == nil {
		st.m.Telemetry = &reports.TelemetryMeta{}
	}
	spool, _ := filepath.Rel(st.dir, archive.Open(st.dir).Spool())
	st.m.Telemetry.Influx = &reports.InfluxMeta{URL: cfg.URL, Org: cfg.Org, Bucket: cfg.Bucket, Spool: spool}
	st.save()
}

// mergeHealth folds b's gaps and InfluxDB books into a's (a run's
// sessions each have their collectors).
func mergeHealth(a, b *reports.TelemetryMeta) {
	a.GapCount += b.GapCount
	a.MissedSamples += b.MissedSamples
	a.UnreadableValues += b.UnreadableValues
	a.Gaps = append(a.Gaps, b.Gaps...)
	a.Gaps = a.Gaps[:min(len(a.Gaps), reports.MaxGapsKept)]
	if a.Influx == nil {
		a.Influx = b.Influx
	} else if b.Influx != nil {
		sa, sb := &a.Influx.Stats, b.Influx.Stats
		sa.Written += sb.Written
		sa.Spooled += sb.Spooled
		sa.Replayed += sb.Replayed
		sa.Pending = sb.Pending // one spool: the later session's count is the current one
		sa.Lost += sb.Lost
		sa.Rejected += sb.Rejected
		sa.TimedOut += sb.TimedOut
		sa.Slow += sb.Slow
		sa.MaxWrite = max(sa.MaxWrite, sb.MaxWrite)
		sa.Outages = append(sa.Outages, sb.Outages...)
	}
}

// telemetryWarnings says what the run's telemetry lacks (first the
// problems that make it degraded, then what only informs).
func telemetryWarnings(meta *reports.TelemetryMeta) []string {
	if meta == nil {
		return nil
	}
	var out []string
	for _, g := range meta.Gaps {
		out = append(out, g.Warning)
	}
	if more := meta.GapCount - keptGaps(meta.Gaps); more > 0 {
		out = append(out, fmt.Sprintf("telemetry: %d more gaps (telemetry/collector_gap.lp has every one)", more))
	}
	if meta.GapCount > 0 {
		all := fmt.Sprintf("telemetry: %d gaps in all, up to %d samples missed", meta.GapCount, meta.MissedSamples)
		if meta.UnreadableValues > 0 {
			all += fmt.Sprintf(", %d counter values unreadable", meta.UnreadableValues)
		}
		out = append(out, all)
	}
	inf := meta.Influx
	if inf == nil {
		return out
	}
	st := inf.Stats
	if st.Pending > 0 {
		out = append(out, fmt.Sprintf("%s%d points of %d wait in the spool %s (InfluxDB %s, bucket %s): `labctl telemetry replay RUN_DIR` writes them; the archive has them all",
			UnreplayedPrefix, st.Pending, st.Written+st.Pending+st.Lost, inf.Spool, inf.URL, inf.Bucket))
	}
	if st.Lost > 0 {
		out = append(out, fmt.Sprintf("telemetry lost to InfluxDB %s: %d points neither written nor spooled (the archive has them)", inf.URL, st.Lost))
	}
	if st.Rejected > 0 {
		out = append(out, fmt.Sprintf("telemetry rejected by InfluxDB %s: %d points in batches it refused (e.g. a field type conflict; the archive has them)", inf.URL, st.Rejected))
	}
	for _, o := range st.Outages {
		end := "not back when the run ended"
		if !o.To.IsZero() {
			end = fmt.Sprintf("back at %s UTC after %v", o.To.UTC().Format("15:04:05.000"), o.To.Sub(o.From).Round(time.Millisecond))
		}
		out = append(out, fmt.Sprintf("InfluxDB %s took no writes from %s UTC, %s (%s); %d points went to the spool, %d of them replayed",
			inf.URL, o.From.UTC().Format("15:04:05.000"), end, o.Err, st.Spooled, st.Replayed))
	}
	if st.TimedOut > 0 || st.Slow > 0 {
		out = append(out, fmt.Sprintf("InfluxDB %s was slow: %d writes got no answer in time, %d answered slowly (longest answered write %v)",
			inf.URL, st.TimedOut, st.Slow, st.MaxWrite.Round(time.Millisecond)))
	}
	return out
}

// quietClose closes a sink whose errors its owner reads otherwise (the
// InfluxDB sink's books, in the manifest).
type quietClose struct{ collectors.Sink }

func (q quietClose) Close(ctx context.Context) error { _ = q.Sink.Close(ctx); return nil }
