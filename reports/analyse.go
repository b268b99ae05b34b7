package reports

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/labctl/labctl/perftest"
)

// Summary is summary.json.
type Summary struct {
	RunID    string         `json:"run_id"`
	Scenario string         `json:"scenario"`
	Lab      string         `json:"lab"`
	Outcome  string         `json:"outcome"`
	Buckets  []int64        `json:"size_buckets"` // upper edges (bytes) of the FCT size buckets
	Points   []PointSummary `json:"points"`
}

// PointSummary is one point's results. Failed counts every flow that did
// not complete (failed or skipped); they are in Flows but not in the FCTs.
type PointSummary struct {
	Name               string            `json:"name"`
	Pattern            string            `json:"pattern"`
	Flows              int               `json:"flows"`
	Failed             int               `json:"failed"`
	FCT                FCTSummary        `json:"fct_ns"`
	BySize             []BucketSummary   `json:"fct_by_size"`
	GoodputGbps        float64           `json:"goodput_gbps"`
	PFCPauseFrames     uint64            `json:"pfc_pause_frames"` // sent by switch ports
	PFCPauseRx         uint64            `json:"pfc_pause_frames_rx"`
	ECNMarked          uint64            `json:"ecn_marked"`
	Drops              uint64            `json:"drops"` // packets dropped by switch ports
	PeakQueueBytes     uint64            `json:"peak_queue_bytes"`
	PeakWatermarkBytes uint64            `json:"peak_watermark_bytes"`
	PeakQueues         []PortPeak        `json:"peak_queue_by_port"`
	TelemetryPoints    int               `json:"telemetry_points"`
	Gaps               int               `json:"telemetry_gaps"`
	StartNs            int64             `json:"start_ns"` // first start of a completed flow
	EndNs              int64             `json:"end_ns"`   // last end of a completed flow
	WindowStartNs      int64             `json:"window_start_ns"`
	WindowEndNs        int64             `json:"window_end_ns"` // telemetry window, margin included
	AllReduce          *AllReduceSummary `json:"allreduce,omitempty"`
}

// BucketSummary is the FCT of the completed flows in one size bucket.
type BucketSummary struct {
	Bucket string     `json:"bucket"`
	Flows  int        `json:"flows"`
	FCT    FCTSummary `json:"fct_ns"`
}

// PortPeak is a switch port's peak queue depth in the point; Queue is the
// queue that reached it.
type PortPeak struct {
	Device    string `json:"device"`
	Port      string `json:"port"`
	Queue     string `json:"queue"`
	Bytes     uint64 `json:"bytes"`
	Watermark uint64 `json:"watermark"`
}

// AllReduceSummary holds step times and bandwidths as nccl-tests defines
// them. AlgBW and BusBW are set only when every flow completed.
type AllReduceSummary struct {
	Hosts       int        `json:"hosts"`
	BufferBytes int64      `json:"buffer_bytes"`
	Steps       []StepTime `json:"steps"`
	TotalNs     int64      `json:"total_ns"`
	Complete    bool       `json:"complete"`
	AlgBWGbps   float64    `json:"algbw_gbps"`
	BusBWGbps   float64    `json:"busbw_gbps"`
}

// StepTime is one all-reduce step: first start to last end of its flows.
type StepTime struct {
	Step       int   `json:"step"`
	StartNs    int64 `json:"start_ns"`
	EndNs      int64 `json:"end_ns"`
	DurationNs int64 `json:"duration_ns"`
}

// CDF is one point's FCT distribution for plotting.
type CDF struct {
	Point  string
	Points []CDFPoint
}

// DefaultBuckets are the usual flow-size bins: <100KB, 100KB-1MB, >=1MB.
func DefaultBuckets() []int64 { return []int64{100_000, 1_000_000} }

// Analyser holds the analysis settings; the zero value uses the defaults.
type Analyser struct {
	// Buckets are ascending upper edges in bytes; n edges make n+1
	// buckets. Nil: DefaultBuckets.
	Buckets []int64
	// MarginNs extends each point's telemetry window past its end, so the
	// first sample after the traffic (which holds its last counts) is
	// included. 0: two sampling intervals, or 1 ms when the interval is
	// unknown; never into the next point.
	MarginNs int64
	// CDFPoints bounds the points per CDF line (0: 400), keeping the HTML
	// small for runs of many flows.
	CDFPoints int
}

// Analyse computes a run's summary with the default settings.
func Analyse(run *Run) (*Summary, error) {
	s, _, err := Analyser{}.Analyse(run)
	return s, err
}

// Analyse computes a run's summary and the FCT CDF of each point.
func (a Analyser) Analyse(run *Run) (*Summary, []CDF, error) {
	buckets := a.Buckets
	if buckets == nil {
		buckets = DefaultBuckets()
	}
	for i, b := range buckets {
		if b <= 0 || (i > 0 && b <= buckets[i-1]) {
			return nil, nil, fmt.Errorf("size buckets %v: want ascending positive edges", buckets)
		}
	}
	m := run.Manifest
	sum := &Summary{RunID: m.RunID, Scenario: m.Scenario, Outcome: m.Outcome, Buckets: buckets}
	if m.Lab != nil {
		sum.Lab = m.Lab.Name
	}
	metas, rows := pointsOf(m.Points, run.Flows)
	var cdfs []CDF
	for _, pm := range metas {
		ps, fct := flowStats(pm, rows[pm.Name], buckets)
		sum.Points = append(sum.Points, ps)
		cdfs = append(cdfs, CDF{Point: pm.Name, Points: fct.CDF(cmp.Or(a.CDFPoints, 400))})
	}
	wins := windows(metas, a.MarginNs)
	for i, w := range wins {
		sum.Points[i].WindowStartNs, sum.Points[i].WindowEndNs = w.start, w.end
	}
	if run.Telemetry != nil {
		if err := telemetryStats(run.Telemetry, wins, sum.Points); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", cmp.Or(run.Dir, m.RunID), err)
		}
	}
	return sum, cdfs, nil
}

// pointsOf groups rows by point, in manifest order. Points that have rows
// but no manifest entry (an interrupted run) come after, windowed by their
// flows; so does a manifest entry without a window.
func pointsOf(metas []PointMeta, flows []FlowRow) ([]PointMeta, map[string][]FlowRow) {
	rows := map[string][]FlowRow{}
	var order []string
	for _, r := range flows {
		if _, ok := rows[r.Point]; !ok {
			order = append(order, r.Point)
		}
		rows[r.Point] = append(rows[r.Point], r)
	}
	out := append([]PointMeta(nil), metas...)
	known := map[string]bool{}
	for _, pm := range metas {
		known[pm.Name] = true
	}
	for _, name := range order {
		if !known[name] {
			out = append(out, PointMeta{Name: name, Flows: len(rows[name])})
		}
	}
	for i := range out {
		if out[i].EndNs == 0 {
			for j, r := range rows[out[i].Name] {
				if j == 0 || r.StartNs < out[i].StartNs {
					out[i].StartNs = r.StartNs
				}
				out[i].EndNs = max(out[i].EndNs, r.EndNs)
			}
		}
	}
	return out, rows
}

func bucketOf(size int64, edges []int64) int {
	return sort.Search(len(edges), func(i int) bool { return size < edges[i] })
}

func bucketName(i int, edges []int64) string {
	h := func(b int64) string {
		switch {
		case b%1_000_000_000 == 0:
			return fmt.Sprintf("%dGB", b/1_000_000_000)
		case b%1_000_000 == 0:
			return fmt.Sprintf("%dMB", b/1_000_000)
		case b%1000 == 0:
			return fmt.Sprintf("%dKB", b/1000)
		}
		return fmt.Sprintf("%dB", b)
	}
	switch {
	case len(edges) == 0:
		return "all"
	case i == 0:
		return "<" + h(edges[0])
	case i == len(edges):
		return ">=" + h(edges[i-1])
	}
	return h(edges[i-1]) + "-" + h(edges[i])
}

func flowStats(pm PointMeta, rows []FlowRow, edges []int64) (PointSummary, *FCTStats) {
	ps := PointSummary{Name: pm.Name, Pattern: pm.Pattern, Flows: len(rows)}
	all := &FCTStats{}
	buckets := make([]FCTStats, len(edges)+1)
	var bytes int64
	steps := map[int]*StepTime{}
	done := 0
	for _, r := range rows {
		if r.Status != perftest.StatusOK {
			ps.Failed++
			continue
		}
		fct := r.FCTNs
		if fct == 0 && r.EndNs > r.StartNs {
			fct = r.EndNs - r.StartNs
		}
		all.Add(fct)
		buckets[bucketOf(r.Size, edges)].Add(fct)
		bytes += r.Size
		if done == 0 || r.StartNs < ps.StartNs {
			ps.StartNs = r.StartNs
		}
		ps.EndNs = max(ps.EndNs, r.EndNs)
		done++
		st, ok := steps[r.Step]
		if !ok {
			st = &StepTime{Step: r.Step, StartNs: r.StartNs, EndNs: r.EndNs}
			steps[r.Step] = st
		}
		st.StartNs, st.EndNs = min(st.StartNs, r.StartNs), max(st.EndNs, r.EndNs)
	}
	ps.FCT = all.Summary()
	for i := range buckets {
		if buckets[i].Count() > 0 {
			ps.BySize = append(ps.BySize, BucketSummary{Bucket: bucketName(i, edges), Flows: buckets[i].Count(), FCT: buckets[i].Summary()})
		}
	}
	// Aggregate goodput: completed bytes over the span from the first start
	// to the last end (bits per ns = Gb/s).
	span := ps.EndNs - ps.StartNs
	if span > 0 {
		ps.GoodputGbps = float64(bytes) * 8 / float64(span)
	}
	if pm.Pattern == "allreduce" {
		ps.AllReduce = allReduce(pm, rows, steps, span, ps.Failed == 0 && done > 0)
	}
	return ps, all
}

func allReduce(pm PointMeta, rows []FlowRow, steps map[int]*StepTime, total int64, complete bool) *AllReduceSummary {
	ar := &AllReduceSummary{Hosts: pm.Hosts, BufferBytes: pm.BufferBytes, TotalNs: total, Complete: complete}
	if ar.Hosts == 0 { // derive from the ring when the runner did not say
		hosts := map[string]bool{}
		for _, r := range rows {
			hosts[r.Src], hosts[r.Dst] = true, true
		}
		ar.Hosts = len(hosts)
	}
	for _, st := range steps {
		st.DurationNs = st.EndNs - st.StartNs
		ar.Steps = append(ar.Steps, *st)
	}
	sort.Slice(ar.Steps, func(i, j int) bool { return ar.Steps[i].Step < ar.Steps[j].Step })
	if !complete || total <= 0 {
		return ar
	}
	// nccl-tests, doc/PERFORMANCE.md: algbw = S / t (S the buffer size, t
	// the operation's time); for all-reduce busbw = algbw * 2(n-1)/n, the
	// per-rank link traffic of an optimal ring, comparable to link speed.
	ar.AlgBWGbps = float64(pm.BufferBytes) * 8 / float64(total)
	if n := float64(ar.Hosts); n > 0 {
		ar.BusBWGbps = ar.AlgBWGbps * 2 * (n - 1) / n
	}
	return ar
}
