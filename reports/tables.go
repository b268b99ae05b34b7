package reports

import (
	"fmt"
	"strconv"
)

// table is a rendered table: Markdown and HTML print the same cells.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
}

func us(ns int64) string    { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
func usf(ns float64) string { return fmt.Sprintf("%.1f", ns/1e3) }
func kib(b uint64) string   { return fmt.Sprintf("%.1f", float64(b)/1024) }
func mib(b int64) string    { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
func gbps(v float64) string { return fmt.Sprintf("%.2f", v) }
func itoa(v int) string     { return strconv.Itoa(v) }
func utoa(v uint64) string  { return strconv.FormatUint(v, 10) }

// topQueues is how many ports per point the queue table lists.
const topQueues = 5

func tables(s *Summary) []table {
	over := table{Title: "Points", Header: []string{"Point", "Pattern", "Flows", "Failed", "FCT mean (µs)", "p50", "p95", "p99", "p99.9", "max",
		"Goodput (Gb/s)", "PFC pause tx", "PFC pause rx", "ECN marked", "Drops", "Peak queue (KiB)", "Telemetry points", "Gaps"}}
	size := table{Title: "FCT by flow size (µs)", Header: []string{"Point", "Size", "Flows", "mean", "p50", "p95", "p99", "p99.9", "max"}}
	peaks := table{Title: fmt.Sprintf("Peak queue depth per switch port (top %d per point)", topQueues),
		Header: []string{"Point", "Device", "Port", "Queue", "Peak depth (KiB)", "Watermark (KiB)"}}
	ar := table{Title: "All-reduce", Header: []string{"Point", "Hosts", "Buffer (MiB)", "Steps", "Total (µs)", "Slowest step (µs)", "algbw (Gb/s)", "busbw (Gb/s)"}}
	steps := table{Title: "All-reduce steps", Header: []string{"Point", "Step", "Start (µs after first)", "Duration (µs)"}}
	for _, p := range s.Points {
		f := p.FCT
		over.Rows = append(over.Rows, []string{p.Name, p.Pattern, itoa(p.Flows), itoa(p.Failed), usf(f.Mean), us(f.P50), us(f.P95),
			us(f.P99), us(f.P999), us(f.Max), gbps(p.GoodputGbps), utoa(p.PFCPauseFrames), utoa(p.PFCPauseRx), utoa(p.ECNMarked), utoa(p.Drops),
			kib(p.PeakQueueBytes), itoa(p.TelemetryPoints), itoa(p.Gaps)})
		for _, b := range p.BySize {
			size.Rows = append(size.Rows, []string{p.Name, b.Bucket, itoa(b.Flows), usf(b.FCT.Mean), us(b.FCT.P50), us(b.FCT.P95),
				us(b.FCT.P99), us(b.FCT.P999), us(b.FCT.Max)})
		}
		for i, q := range p.PeakQueues {
			if i == topQueues || (q.Bytes == 0 && q.Watermark == 0) {
				break
			}
			peaks.Rows = append(peaks.Rows, []string{p.Name, q.Device, q.Port, q.Queue, kib(q.Bytes), kib(q.Watermark)})
		}
		a := p.AllReduce
		if a == nil {
			continue
		}
		var slow int64
		for _, st := range a.Steps {
			slow = max(slow, st.DurationNs)
			steps.Rows = append(steps.Rows, []string{p.Name, itoa(st.Step), us(st.StartNs - p.StartNs), us(st.DurationNs)})
		}
		alg, bus := gbps(a.AlgBWGbps), gbps(a.BusBWGbps)
		if !a.Complete {
			alg, bus = "incomplete", "incomplete"
		}
		ar.Rows = append(ar.Rows, []string{p.Name, itoa(a.Hosts), mib(a.BufferBytes), itoa(len(a.Steps)), us(a.TotalNs), us(slow), alg, bus})
	}
	out := []table{over, size, peaks}
	if len(ar.Rows) > 0 {
		out = append(out, ar, steps)
	}
	return out
}
