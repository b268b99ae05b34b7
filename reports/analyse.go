package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/perftest"
)

// Summary is summary.json.
type Summary struct {
	RunID    string         `json:"run_id"`
	Scenario string         `json:"scenario"`
	Lab      string         `json:"lab"`
	Outcome  string         `json:"outcome"`
	Points   []PointSummary `json:"points"`
}

// PointSummary is one point's results.
type PointSummary struct {
	Name            string            `json:"name"`
	Pattern         string            `json:"pattern"`
	Flows           int               `json:"flows"`
	Failed          int               `json:"failed"`
	FCT             FCTSummary        `json:"fct_ns"`
	BySize          []BucketSummary   `json:"fct_by_size"`
	GoodputGbps     float64           `json:"goodput_gbps"`
	PFCPauseFrames  uint64            `json:"pfc_pause_frames"`
	PFCPauseRx      uint64            `json:"pfc_pause_frames_rx"`
	ECNMarked       uint64            `json:"ecn_marked"`
	PeakQueueBytes  uint64            `json:"peak_queue_bytes"`
	PeakQueues      []PortPeak        `json:"peak_queue_by_port"`
	TelemetryPoints int               `json:"telemetry_points"`
	Gaps            int               `json:"telemetry_gaps"`
	StartNs         int64             `json:"start_ns"`
	EndNs           int64             `json:"end_ns"`
	AllReduce       *AllReduceSummary `json:"allreduce,omitempty"`
	cdf             []int64
}

// BucketSummary is the FCT of the flows in one size bucket.
type BucketSummary struct {
	Bucket string     `json:"bucket"`
	Flows  int        `json:"flows"`
	FCT    FCTSummary `json:"fct_ns"`
}

// PortPeak is a switch port's peak queue depth in the point.
type PortPeak struct {
	Device string `json:"device"`
	Port   string `json:"port"`
	Queue  string `json:"queue"`
	Bytes  uint64 `json:"bytes"`
}

// AllReduceSummary: step times and bandwidths as nccl-tests defines them.
type AllReduceSummary struct {
	Hosts       int        `json:"hosts"`
	BufferBytes int64      `json:"buffer_bytes"`
	Steps       []StepTime `json:"steps"`
	TotalNs     int64      `json:"total_ns"`
	AlgBWGbps   float64    `json:"algbw_gbps"`
	BusBWGbps   float64    `json:"busbw_gbps"`
}

// StepTime is one all-reduce step: first start to last end.
type StepTime struct {
	Step       int   `json:"step"`
	StartNs    int64 `json:"start_ns"`
	EndNs      int64 `json:"end_ns"`
	DurationNs int64 `json:"duration_ns"`
}

// DefaultBuckets are the papers' flow-size bins: <100KB, 100KB-1MB, >=1MB.
var DefaultBuckets = []int64{100_000, 1_000_000}

// Analyse reads a run archive and computes its summary.
func Analyse(dir string) (*Summary, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("run %s: manifest.json: %w", dir, err)
	}
	sum := &Summary{RunID: m.RunID, Scenario: m.Scenario, Outcome: m.Outcome}
	if m.Lab != nil {
		sum.Lab = m.Lab.Name
	}
	rows := map[string][]FlowRow{}
	f, err := os.Open(filepath.Join(dir, "flows.csv"))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	defer f.Close()
	if err := ReadFlowsCSV(f, func(r FlowRow) error { rows[r.Point] = append(rows[r.Point], r); return nil }); err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	for _, pm := range m.Points {
		ps := flowStats(pm, rows[pm.Name])
		if err := telemetryStats(filepath.Join(dir, "telemetry"), pm, &ps); err != nil {
			return nil, fmt.Errorf("run %s: %w", dir, err)
		}
		sum.Points = append(sum.Points, ps)
	}
	return sum, nil
}

func bucketName(i int, edges []int64) string {
	h := func(b int64) string {
		switch {
		case b >= 1_000_000 && b%1_000_000 == 0:
			return fmt.Sprintf("%dMB", b/1_000_000)
		case b >= 1000 && b%1000 == 0:
			return fmt.Sprintf("%dKB", b/1000)
		}
		return fmt.Sprintf("%dB", b)
	}
	switch {
	case i == 0:
		return "<" + h(edges[0])
	case i == len(edges):
		return ">=" + h(edges[i-1])
	}
	return h(edges[i-1]) + "-" + h(edges[i])
}

func flowStats(pm PointMeta, rows []FlowRow) PointSummary {
	ps := PointSummary{Name: pm.Name, Pattern: pm.Pattern, Flows: len(rows)}
	var all FCTStats
	buckets := make([]FCTStats, len(DefaultBuckets)+1)
	var bytes int64
	first, last := int64(0), int64(0)
	steps := map[int]*StepTime{}
	for _, r := range rows {
		if r.Status != perftest.StatusOK {
			ps.Failed++
			continue
		}
		all.Add(r.FCTNs)
		i := sort.Search(len(DefaultBuckets), func(i int) bool { return r.Size < DefaultBuckets[i] })
		buckets[i].Add(r.FCTNs)
		bytes += r.Size
		if first == 0 || r.StartNs < first {
			first = r.StartNs
		}
		last = max(last, r.EndNs)
		st, ok := steps[r.Step]
		if !ok {
			st = &StepTime{Step: r.Step, StartNs: r.StartNs, EndNs: r.EndNs}
			steps[r.Step] = st
		}
		st.StartNs, st.EndNs = min(st.StartNs, r.StartNs), max(st.EndNs, r.EndNs)
	}
	ps.FCT = all.Summary()
	ps.cdf = all.Sorted()
	for i := range buckets {
		if buckets[i].Count() > 0 {
			ps.BySize = append(ps.BySize, BucketSummary{Bucket: bucketName(i, DefaultBuckets), Flows: buckets[i].Count(), FCT: buckets[i].Summary()})
		}
	}
	ps.StartNs, ps.EndNs = first, last
	if last > first {
		ps.GoodputGbps = float64(bytes) * 8 / float64(last-first)
	}
	if pm.Pattern == "allreduce" && last > first {
		ar := &AllReduceSummary{Hosts: pm.Hosts, BufferBytes: pm.BufferBytes, TotalNs: last - first}
		for _, st := range steps {
			st.DurationNs = st.EndNs - st.StartNs
			ar.Steps = append(ar.Steps, *st)
		}
		sort.Slice(ar.Steps, func(i, j int) bool { return ar.Steps[i].Step < ar.Steps[j].Step })
		// nccl-tests (doc/PERFORMANCE.md): algbw = S/t; for all-reduce
		// busbw = algbw * 2(n-1)/n, comparable to the link bandwidth.
		ar.AlgBWGbps = float64(pm.BufferBytes) * 8 / float64(ar.TotalNs)
		if n := float64(pm.Hosts); n > 0 {
			ar.BusBWGbps = ar.AlgBWGbps * 2 * (n - 1) / n
		}
		ps.AllReduce = ar
	}
	return ps
}

// telemetryStats windows the point's telemetry: counters are cumulative, so
// a counter's increase is its last value in the window minus its last value
// before it (or its first in the window when there is none before).
func telemetryStats(dir string, pm PointMeta, ps *PointSummary) error {
	margin := max(2*pm.TelemetryIntervalNs, int64(time.Microsecond))
	start, end := pm.StartNs, pm.EndNs+margin
	type key struct{ dev, port, field string }
	before, first, last := map[key]uint64{}, map[key]uint64{}, map[key]uint64{}
	peaks := map[PortPeak]uint64{}
	for _, meas := range []string{"port", "queue", "collector_gap"} {
		err := collectors.ReadLPFile(filepath.Join(dir, meas+".lp"), func(p collectors.Point) error {
			ts := p.Time.UnixNano()
			if ts >= start && ts <= end {
				ps.TelemetryPoints++
			}
			switch meas {
			case "collector_gap":
				if ts >= start && ts <= end {
					ps.Gaps++
				}
			case "queue":
				if d, ok := collectors.Uint(p.Fields["depth_bytes"]); ok && ts >= start && ts <= end {
					k := PortPeak{Device: p.Tags["device"], Port: p.Tags["port"], Queue: p.Tags["queue"]}
					peaks[k] = max(peaks[k], d)
				}
				fallthrough
			case "port":
				for f, v := range p.Fields {
					if !(strings.HasPrefix(f, "pfc") || f == "ecn_marked") {
						continue
					}
					u, ok := collectors.Uint(v)
					if !ok {
						continue
					}
					k := key{p.Tags["device"], p.Tags["port"] + "/" + p.Tags["queue"], f}
					switch {
					case ts < start:
						before[k] = u
					case ts <= end:
						if _, ok := first[k]; !ok {
							first[k] = u
						}
						last[k] = u
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for k, v := range last {
		base, ok := before[k]
		if !ok {
			base = first[k]
		}
		if v < base {
			continue // counter reset (device restart): not an increase
		}
		d := v - base
		switch {
		case strings.HasSuffix(k.field, "_tx"):
			ps.PFCPauseFrames += d
		case strings.HasSuffix(k.field, "_rx"):
			ps.PFCPauseRx += d
		case k.field == "ecn_marked":
			ps.ECNMarked += d
		}
	}
	for k, v := range peaks {
		k.Bytes = v
		ps.PeakQueues = append(ps.PeakQueues, k)
		ps.PeakQueueBytes = max(ps.PeakQueueBytes, v)
	}
	sort.Slice(ps.PeakQueues, func(i, j int) bool {
		a, b := ps.PeakQueues[i], ps.PeakQueues[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Device+a.Port < b.Device+b.Port
	})
	return nil
}
