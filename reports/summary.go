package reports

// Summary is summary.json: one run's points (or, from Compare, the points
// of several runs), their groups of repetitions and the comparisons of
// schemes.
type Summary struct {
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
	Lab      string `json:"lab"`
	Outcome  string `json:"outcome"`
	// Warnings are the run's (Manifest.Warnings: why it is degraded, what
	// did not stop it), then what reading the archive tolerated, e.g. a
	// file whose last line a crash left incomplete.
	Warnings []string `json:"warnings,omitempty"`
	Runs     []string `json:"runs,omitempty"` // Compare: the run ids compared
	Buckets  []int64  `json:"size_buckets"`   // upper edges (bytes) of the size buckets
	// Baseline is the scheme the comparisons measure against.
	Baseline    string         `json:"baseline_scheme,omitempty"`
	Points      []PointSummary `json:"points"`
	Groups      []Group        `json:"groups"`
	Comparisons []Comparison   `json:"comparisons"`
}

// PointSummary is one point's results. Failed counts every flow that did
// not complete (failed or skipped); they are in Flows but not in the FCTs.
// Pointer fields are null ("n/a" in tables) when the archive lacks what
// they need, which is not the same as 0.
type PointSummary struct {
	Run     string         `json:"run,omitempty"` // set by Compare
	Name    string         `json:"name"`
	Pattern string         `json:"pattern"`
	Params  map[string]any `json:"params,omitempty"`
	// Scheme, Workload and Load come from Params (ParamScheme, ...);
	// Compare falls back to the run's scenario name for the scheme.
	Scheme        string  `json:"scheme,omitempty"`
	Workload      string  `json:"workload,omitempty"`
	Load          float64 `json:"load,omitempty"`
	Status        string  `json:"status"` // ok | failed
	Error         string  `json:"error,omitempty"`
	RequestedLoad float64 `json:"requested_load,omitempty"`
	AchievedLoad  float64 `json:"achieved_load,omitempty"`

	Flows  int        `json:"flows"`
	Failed int        `json:"failed"`
	FCT    FCTSummary `json:"fct_ns"`
	// Slowdown covers the completed flows whose ideal FCT is known (both
	// ends are hosts of the archived lab); NoIdeal counts the others.
	Slowdown    SlowdownSummary `json:"slowdown"`
	NoIdeal     int             `json:"flows_without_ideal,omitempty"`
	BySize      []BucketSummary `json:"fct_by_size"`
	GoodputGbps float64         `json:"goodput_gbps"`
	// Senders is an incast's number of senders (its hosts but the
	// receiver) and LinkGbps the receiver's link rate (goodput.go).
	Senders  int     `json:"senders,omitempty"`
	LinkGbps float64 `json:"link_gbps,omitempty"`

	PFCPauseFrames uint64 `json:"pfc_pause_frames"` // sent by switch ports
	PFCPauseRx     uint64 `json:"pfc_pause_frames_rx"`
	// PFCPauseTxPerS is PFCPauseFrames per second of RateSpanNs.
	PFCPauseTxPerS float64   `json:"pfc_pause_tx_per_s"`
	PFCByTier      []TierPFC `json:"pfc_by_tier,omitempty"`
	ECNMarked      uint64    `json:"ecn_marked"`
	// ECNMarkRate is marked packets over packets sent by the switch ports
	// (null without tx packet counters); ECNMarksPerSec is per second of
	// RateSpanNs.
	ECNMarkRate        *float64   `json:"ecn_mark_rate"`
	ECNMarksPerSec     float64    `json:"ecn_marks_per_s"`
	Drops              uint64     `json:"drops"` // packets dropped by switch ports
	PeakQueueBytes     uint64     `json:"peak_queue_bytes"`
	MeanQueueBytes     float64    `json:"mean_queue_bytes"`
	PeakWatermarkBytes uint64     `json:"peak_watermark_bytes"`
	PeakQueues         []PortPeak `json:"peak_queue_by_port"`
	// OutOfOrder is the out_of_sequence RNIC counter's increase summed
	// over hosts; RNIC holds every rnic counter's increase the same way.
	OutOfOrder *uint64           `json:"out_of_order_packets"`
	RNIC       map[string]uint64 `json:"rnic,omitempty"`
	// SchemeCounts are the load-balancing modules' counters' increases
	// (schemecounts.go), by scope then name; none on a real lab.
	SchemeCounts []SchemeCount `json:"scheme_counts,omitempty"`
	// PathElephants are Reunion's per-link elephant counts' increases
	// (pathelephants.go), by device then port; none on a real lab.
	PathElephants   []LinkElephants `json:"path_elephants,omitempty"`
	TelemetryPoints int             `json:"telemetry_points"`
	Gaps            int             `json:"telemetry_gaps"`
	// NoTraffic: the point sent nothing (it failed before its flows
	// started), so it has no telemetry window and every fabric number
	// above is n/a rather than 0.
	NoTraffic bool  `json:"no_traffic,omitempty"`
	StartNs   int64 `json:"start_ns"` // first start of a completed flow
	EndNs     int64 `json:"end_ns"`   // last end of a completed flow
	// DurationNs is the point's traffic span (manifest, else its flows).
	DurationNs int64 `json:"duration_ns"`
	// ArrivalWindowNs is a workload point's arrival window (manifest, else
	// the span of its flows' starts). RateSpanNs is what per-second rates
	// and a workload's goodput divide by: the arrival window plus the mean
	// ideal FCT of the completed flows for a workload, DurationNs
	// otherwise (docs/reports.md, "Rates").
	ArrivalWindowNs int64             `json:"arrival_window_ns,omitempty"`
	RateSpanNs      int64             `json:"rate_span_ns"`
	WindowStartNs   int64             `json:"window_start_ns"`
	WindowEndNs     int64             `json:"window_end_ns"` // telemetry window, margin included
	AllReduce       *AllReduceSummary `json:"allreduce,omitempty"`
	// BurstWindow is a burst point's burst: first start to last end of
	// its flows after the background (step 0). LongFlows are its largest
	// flows (flowseries.go) with their throughput per period; Paths its
	// fabric ports' utilisation and PAUSE frames (pathutil.go).
	BurstWindow *Span      `json:"burst_window,omitempty"`
	LongFlows   []FlowRate `json:"long_flows,omitempty"`
	Paths       []PathUse  `json:"paths,omitempty"`

	// Plot data, not in summary.json.
	CDF         []CDFPoint   `json:"-"` // FCT CDF of the completed flows
	SizeBins    []SizeBin    `json:"-"` // slowdowns by log-spaced size bin
	QueueSeries []Series     `json:"-"` // depth of the deepest queues
	PFCSeries   []Series     `json:"-"` // pause frames sent per second, per tier
	FlowSeries  []Series     `json:"-"` // long flows' throughput, Gb/s
	PathSeries  []TierSeries `json:"-"` // fabric ports' utilisation, per tier
}

// BucketSummary is the FCT and slowdown of the completed flows in one
// size bucket.
type BucketSummary struct {
	Bucket   string          `json:"bucket"`
	Flows    int             `json:"flows"`
	FCT      FCTSummary      `json:"fct_ns"`
	Slowdown SlowdownSummary `json:"slowdown"`
}

// TierPFC is the PFC activity of one switch tier (the lab's switch role:
// leaf, spine, agg; "host" for RNIC counters; "unknown" for devices the
// lab does not list) in a point.
type TierPFC struct {
	Tier    string  `json:"tier"`
	Tx      uint64  `json:"pause_frames_tx"`
	Rx      uint64  `json:"pause_frames_rx"`
	TxPerS  float64 `json:"pause_frames_tx_per_s"`
	PauseUs *uint64 `json:"pause_us,omitempty"` // time paused by received pauses, where counted
}

// PortPeak is a switch queue's peak and time-weighted mean depth in the
// point.
type PortPeak struct {
	Device    string  `json:"device"`
	Port      string  `json:"port"`
	Queue     string  `json:"queue"`
	Bytes     uint64  `json:"bytes"`
	MeanBytes float64 `json:"mean_bytes"`
	Watermark uint64  `json:"watermark"`
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

// Series is one line of a time-series plot: values at times (unix ns).
type Series struct {
	Name string
	T    []int64
	V    []float64
}

// Status values of a point.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)
