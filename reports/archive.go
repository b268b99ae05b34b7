package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// Manifest is runs/<run-id>/manifest.json.
type Manifest struct {
	RunID        string         `json:"run_id"`
	Scenario     string         `json:"scenario"`
	ScenarioFile string         `json:"scenario_file,omitempty"`
	Lab          *inventory.Lab `json:"lab"` // credential references only
	Version      string         `json:"labctl_version"`
	Started      time.Time      `json:"started"`
	Ended        time.Time      `json:"ended,omitempty"`
	Outcome      string         `json:"outcome"` // running | ok | failed
	Stage        string         `json:"stage"`   // where the run is or stopped
	Error        string         `json:"error,omitempty"`
	Points       []PointMeta    `json:"points"`
	Telemetry    *TelemetryMeta `json:"telemetry,omitempty"`
}

// PointMeta is what the runner records of one point.
type PointMeta struct {
	Name                string   `json:"name"`
	Pattern             string   `json:"pattern"`
	Hosts               int      `json:"hosts"`
	Flows               int      `json:"flows"`
	BufferBytes         int64    `json:"buffer_bytes,omitempty"`
	LinkGbps            float64  `json:"link_gbps"`
	StartNs             int64    `json:"start_ns"`
	EndNs               int64    `json:"end_ns"`
	TelemetryIntervalNs int64    `json:"telemetry_interval_ns,omitempty"`
	TelemetryLag        []string `json:"telemetry_lag,omitempty"`
}

// TelemetryMeta sums up collection.
type TelemetryMeta struct {
	Devices []string `json:"devices"`
	Points  int      `json:"points"`
	Errors  []string `json:"errors,omitempty"`
}

var flowsHeader = []string{"run", "point", "flow_id", "group", "step", "src", "dst", "size", "start_ns", "end_ns", "fct_ns", "status", "tool"}

// WriteFlowsHeader starts flows.csv.
func WriteFlowsHeader(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(flowsHeader)
	cw.Flush()
	return cw.Error()
}

// WriteFlowsCSV appends one row per flow.
func WriteFlowsCSV(w io.Writer, run, point string, recs []perftest.FlowRecord) error {
	cw := csv.NewWriter(w)
	for _, r := range recs {
		fct := int64(0)
		if r.Status == perftest.StatusOK {
			fct = r.EndNs - r.StartNs
		}
		_ = cw.Write([]string{run, point, strconv.Itoa(r.FlowID), r.Group, strconv.Itoa(r.Step), r.Src, r.Dst,
			strconv.FormatInt(r.Bytes, 10), strconv.FormatInt(r.StartNs, 10), strconv.FormatInt(r.EndNs, 10),
			strconv.FormatInt(fct, 10), r.Status, r.Tool})
	}
	cw.Flush()
	return cw.Error()
}

// FlowRow is one row of flows.csv.
type FlowRow struct {
	Run, Point, Group, Src, Dst, Status, Tool string
	FlowID, Step                              int
	Size, StartNs, EndNs, FCTNs               int64
}

// ReadFlowsCSV streams flows.csv.
func ReadFlowsCSV(r io.Reader, fn func(FlowRow) error) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("flows.csv: %w", err)
	}
	if len(head) != len(flowsHeader) || head[0] != "run" {
		return fmt.Errorf("flows.csv: unexpected header %v", head)
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("flows.csv: %w", err)
		}
		var row FlowRow
		var errs [6]error
		row.Run, row.Point, row.Group, row.Src, row.Dst, row.Status, row.Tool = rec[0], rec[1], rec[3], rec[5], rec[6], rec[11], rec[12]
		row.FlowID, errs[0] = strconv.Atoi(rec[2])
		row.Step, errs[1] = strconv.Atoi(rec[4])
		row.Size, errs[2] = strconv.ParseInt(rec[7], 10, 64)
		row.StartNs, errs[3] = strconv.ParseInt(rec[8], 10, 64)
		row.EndNs, errs[4] = strconv.ParseInt(rec[9], 10, 64)
		row.FCTNs, errs[5] = strconv.ParseInt(rec[10], 10, 64)
		for _, e := range errs {
			if e != nil {
				return fmt.Errorf("flows.csv:%d: %w", line, e)
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}
