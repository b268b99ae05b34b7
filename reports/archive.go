package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// Manifest is runs/<run-id>/manifest.json. The runner fills it stage by
// stage, so an interrupted run still says where it stopped. The archive
// package reads and writes it (archive.ReadManifest, WriteManifest) and
// owns its format (Header).
type Manifest struct {
	archive.Header
	RunID        string         `json:"run_id"`
	Scenario     string         `json:"scenario"`
	ScenarioFile string         `json:"scenario_file,omitempty"`
	Lab          *inventory.Lab `json:"lab"` // credential references only
	// Labs holds every lab the run's points ran on, by name, when a
	// matrix sweeps labs (PointMeta.Lab names one); Lab is the first.
	Labs    map[string]*inventory.Lab `json:"labs,omitempty"`
	Version string                    `json:"labctl_version"`
	Started time.Time                 `json:"started"`
	Ended   time.Time                 `json:"ended,omitempty"`
	Outcome string                    `json:"outcome"` // running | ok | degraded | partial | failed
	// Host, PID and PIDStart name the controller process of the run (its
	// start time, field 22 of /proc/PID/stat, tells a recycled pid
	// apart), so a run still "running" whose process is gone is known
	// to have crashed.
	Host      string         `json:"host,omitempty"`
	PID       int            `json:"pid,omitempty"`
	PIDStart  uint64         `json:"pid_start,omitempty"`
	Stage     string         `json:"stage"` // where the run is or stopped
	Error     string         `json:"error,omitempty"`
	Points    []PointMeta    `json:"points"`
	Telemetry *TelemetryMeta `json:"telemetry,omitempty"`
	// Executor ran the points ("slurm"; "" or "local": this process).
	Executor string `json:"executor,omitempty"`
	// Warnings are problems that did not stop the run: those of a
	// degraded run say what telemetry is missing (device, path, time
	// range, counts); others inform (InfluxDB was down a while, hosts
	// started flows late).
	Warnings []string `json:"warnings,omitempty"`
	// Stages is every stage the run entered (as its progress shows them),
	// with when: where a run's wall time went (bench/e2e.sh reads it).
	Stages []StageTime `json:"stages,omitempty"`
}

// StageTime is when a run entered a stage (Manifest.Stages).
type StageTime struct {
	Stage  string    `json:"stage"`
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`
}

// labOf is the snapshot of the lab a point ran on: Labs[pm.Lab], else Lab
// when the point names none or names it; nil when the archive has no
// snapshot of that lab (its slowdowns are then n/a and its switches'
// tiers "unknown").
func (m *Manifest) labOf(pm PointMeta) *inventory.Lab {
	if l := m.Labs[pm.Lab]; l != nil {
		return l
	}
	if m.Lab != nil && (pm.Lab == "" || pm.Lab == m.Lab.Name) {
		return m.Lab
	}
	return nil
}

// PointMeta is what the runner records of one point. StartNs/EndNs bound
// its traffic on the schedule's timeline (unix ns); telemetry is windowed
// by them.
//
// Params holds the values that distinguish the point from the others of
// its run: every parameter a scenario matrix sweeps, under the name the
// scenario gives it, and the well-known keys ParamScheme, ParamLoad and
// ParamWorkload, which comparison tables and plots use as series and axes.
type PointMeta struct {
	Name    string         `json:"name"`
	Pattern string         `json:"pattern"` // incast | allreduce | ...
	Params  map[string]any `json:"params,omitempty"`
	// Lab is the lab the point ran on (a matrix may sweep topologies).
	Lab string `json:"lab,omitempty"`
	// Status is "ok" or "failed"; a failed point keeps its Error and the
	// run goes on with the next point.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// RequestedLoad is the load a workload point asked for (fraction of
	// each host's link rate); AchievedLoad is what its flows really
	// offered: bytes of the flows started in the arrival window over
	// hosts x link rate x window.
	RequestedLoad float64 `json:"requested_load,omitempty"`
	AchievedLoad  float64 `json:"achieved_load,omitempty"`
	// WindowNs is a workload point's arrival window (its flows start
	// within it); per-second rates of the point divide by it plus the
	// mean ideal FCT (docs/reports.md).
	WindowNs int64 `json:"window_ns,omitempty"`
	// OfferedLoad is what the generated schedule offers (before any host
	// started a flow late); LateFlows and MaxStartLagNs say how many flows
	// hosts started later than planned, and by how much at most.
	OfferedLoad         float64  `json:"offered_load,omitempty"`
	LateFlows           int      `json:"late_flows,omitempty"`
	MaxStartLagNs       int64    `json:"max_start_lag_ns,omitempty"`
	Hosts               int      `json:"hosts"`
	Flows               int      `json:"flows"`
	BufferBytes         int64    `json:"buffer_bytes,omitempty"` // all-reduce buffer size
	LinkGbps            float64  `json:"link_gbps"`
	StartNs             int64    `json:"start_ns"`
	EndNs               int64    `json:"end_ns"`
	TelemetryIntervalNs int64    `json:"telemetry_interval_ns,omitempty"`
	TelemetryLag        []string `json:"telemetry_lag,omitempty"`
	// Executor, JobID and Node say where a point an executor ran ran
	// (docs/slurm.md); empty for a point of a local run.
	Executor string `json:"executor,omitempty"`
	JobID    string `json:"job_id,omitempty"`
	Node     string `json:"node,omitempty"`
}

// Well-known keys of PointMeta.Params.
const (
	ParamScheme   = "scheme"   // load-balancing scheme, e.g. "ecmp", "drill"
	ParamLoad     = "load"     // requested load, a float64
	ParamWorkload = "workload" // flow-size distribution, e.g. "websearch"
	// ParamRepetition and ParamSeed tell repetitions of one measurement
	// apart; points that differ only in them form one group.
	ParamRepetition = "repetition"
	ParamSeed       = "seed"
)

// TelemetryMeta sums up collection.
type TelemetryMeta struct {
	Devices []string `json:"devices"`
	Points  int      `json:"points"`
	Errors  []string `json:"errors,omitempty"`
	// Gaps are the spans of a device's telemetry that are missing (a
	// broken stream, samples a target coalesced, counter values that were
	// no numbers), at most MaxGapsKept of them; GapCount counts them all,
	// MissedSamples sums their lost samples (coalesced exactly, broken
	// streams estimated from the span and interval) and UnreadableValues
	// the values samples carried that were no counters.
	Gaps             []GapMeta `json:"gaps,omitempty"`
	GapCount         int       `json:"gap_count,omitempty"`
	MissedSamples    int64     `json:"missed_samples,omitempty"`
	UnreadableValues int64     `json:"unreadable_values,omitempty"`
	// Influx is what became of the points sent to InfluxDB.
	Influx *InfluxMeta `json:"influx,omitempty"`
}

// MaxGapsKept bounds TelemetryMeta.Gaps (a flapping stream must not bloat
// the manifest); the archive's collector_gap.lp has every one.
const MaxGapsKept = 100

// GapMeta is one telemetry gap (collectors.Gap) as the manifest keeps it,
// or the gaps of unreadable values of one device, target and reason
// (Gaps of them, one per key and run of samples: Path then names the
// keys).
type GapMeta struct {
	Device     string    `json:"device"`
	Target     string    `json:"target"`
	Path       string    `json:"path"`
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until"`
	Missed     int64     `json:"missed_samples"`
	Unreadable int64     `json:"unreadable_values,omitempty"`
	Gaps       int       `json:"gaps,omitempty"` // the archive's gaps it stands for, when more than one
	Reason     string    `json:"reason"`
	Warning    string    `json:"warning"`
}

// InfluxMeta says where telemetry went besides the archive (no token) and
// what became of it; Spool is the spool directory relative to the run
// directory.
type InfluxMeta struct {
	URL    string                 `json:"url"`
	Org    string                 `json:"org,omitempty"`
	Bucket string                 `json:"bucket"`
	Spool  string                 `json:"spool"`
	Stats  collectors.InfluxStats `json:"stats"`
}

// Incomplete says whether telemetry is missing somewhere: a gap in the
// archive, or points InfluxDB does not have (pending in the spool, lost,
// or rejected). Such a run is degraded.
func (t *TelemetryMeta) Incomplete() bool {
	if t == nil {
		return false
	}
	inf := t.Influx != nil && (t.Influx.Stats.Pending > 0 || t.Influx.Stats.Lost > 0 || t.Influx.Stats.Rejected > 0)
	return t.GapCount > 0 || inf
}

// flowsHeader is a function, not a package variable, so no caller can
// change the archive format by accident.
func flowsHeader() []string {
	return []string{"run", "point", "flow_id", "group", "step", "src", "dst", "size", "start_ns", "end_ns", "fct_ns", "status", "tool"}
}

// FlowRow is one row of flows.csv.
type FlowRow struct {
	Run, Point, Group, Src, Dst, Status, Tool string
	FlowID, Step                              int
	Size, StartNs, EndNs, FCTNs               int64
}

// rowOf is the flows.csv row of one flow record. FCT is recorded for
// completed flows only; a failed flow's end time says when it gave up.
func rowOf(run, point string, r perftest.FlowRecord) FlowRow {
	row := FlowRow{Run: run, Point: point, Group: r.Group, Src: r.Src, Dst: r.Dst, Status: r.Status, Tool: r.Tool,
		FlowID: r.FlowID, Step: r.Step, Size: r.Bytes, StartNs: r.StartNs, EndNs: r.EndNs}
	if r.Status == perftest.StatusOK {
		row.FCTNs = r.EndNs - r.StartNs
	}
	return row
}

func (r FlowRow) record() []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{r.Run, r.Point, strconv.Itoa(r.FlowID), r.Group, strconv.Itoa(r.Step), r.Src, r.Dst,
		i(r.Size), i(r.StartNs), i(r.EndNs), i(r.FCTNs), r.Status, r.Tool}
}

// WriteFlowsHeader starts flows.csv.
func WriteFlowsHeader(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(flowsHeader()) // errors surface through Flush/Error
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("flows.csv header: %w", err)
	}
	return nil
}

// WriteFlowsCSV appends one row per flow of a point (after WriteFlowsHeader).
func WriteFlowsCSV(w io.Writer, run, point string, recs []perftest.FlowRecord) error {
	rows := make([]FlowRow, len(recs))
	for i, r := range recs {
		rows[i] = rowOf(run, point, r)
	}
	return writeFlowRows(w, rows)
}

// writeFlowRows appends rows to flows.csv in one write: a crash leaves
// whole rows before it and at most one torn last line (which the reader
// skips and names), never a torn row in the middle of the file.
func writeFlowRows(w io.Writer, rows []FlowRow) error {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	for _, r := range rows {
		_ = cw.Write(r.record())
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("flows.csv: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("flows.csv: %w", err)
	}
	return nil
}
