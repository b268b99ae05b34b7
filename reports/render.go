package reports

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteJSON writes summary.json's content.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func us(ns int64) string    { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
func usf(ns float64) string { return fmt.Sprintf("%.1f", ns/1e3) }
func kib(b uint64) string   { return fmt.Sprintf("%.1f", float64(b)/1024) }
func mib(b int64) string    { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
func gbps(v float64) string { return fmt.Sprintf("%.2f", v) }
func count(v uint64) string { return fmt.Sprintf("%d", v) }

// table is a rendered table: Markdown and HTML print the same cells.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
}

func tables(s *Summary) []table {
	over := table{Title: "Points", Header: []string{"Point", "Pattern", "Flows", "Failed", "FCT mean (us)", "p50", "p95", "p99", "p99.9", "max",
		"Goodput (Gb/s)", "PFC pause frames", "ECN marked", "Peak queue (KiB)", "Telemetry points", "Gaps"}}
	size := table{Title: "FCT by flow size (us)", Header: []string{"Point", "Size", "Flows", "mean", "p50", "p99", "p99.9", "max"}}
	peaks := table{Title: "Peak queue depth per switch port (top 5 per point)", Header: []string{"Point", "Device", "Port", "Queue", "Peak (KiB)"}}
	ar := table{Title: "All-reduce", Header: []string{"Point", "Hosts", "Buffer (MiB)", "Steps", "Total (us)", "Slowest step (us)", "algbw (Gb/s)", "busbw (Gb/s)"}}
	for _, p := range s.Points {
		f := p.FCT
		over.Rows = append(over.Rows, []string{p.Name, p.Pattern, fmt.Sprint(p.Flows), fmt.Sprint(p.Failed), usf(f.Mean), us(f.P50), us(f.P95),
			us(f.P99), us(f.P999), us(f.Max), gbps(p.GoodputGbps), count(p.PFCPauseFrames), count(p.ECNMarked), kib(p.PeakQueueBytes),
			fmt.Sprint(p.TelemetryPoints), fmt.Sprint(p.Gaps)})
		for _, b := range p.BySize {
			size.Rows = append(size.Rows, []string{p.Name, b.Bucket, fmt.Sprint(b.Flows), usf(b.FCT.Mean), us(b.FCT.P50), us(b.FCT.P99), us(b.FCT.P999), us(b.FCT.Max)})
		}
		for i, q := range p.PeakQueues {
			if i == 5 || q.Bytes == 0 {
				break
			}
			peaks.Rows = append(peaks.Rows, []string{p.Name, q.Device, q.Port, q.Queue, kib(q.Bytes)})
		}
		if a := p.AllReduce; a != nil {
			var slow int64
			for _, st := range a.Steps {
				slow = max(slow, st.DurationNs)
			}
			ar.Rows = append(ar.Rows, []string{p.Name, fmt.Sprint(a.Hosts), mib(a.BufferBytes), fmt.Sprint(len(a.Steps)), us(a.TotalNs), us(slow), gbps(a.AlgBWGbps), gbps(a.BusBWGbps)})
		}
	}
	out := []table{over, size, peaks}
	if len(ar.Rows) > 0 {
		out = append(out, ar)
	}
	return out
}

// WriteMarkdown prints the report's tables.
func WriteMarkdown(w io.Writer, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Run %s\n\nScenario **%s** on lab **%s**, outcome **%s**.\n", s.RunID, s.Scenario, s.Lab, s.Outcome)
	for _, t := range tables(s) {
		fmt.Fprintf(&b, "\n## %s\n\n| %s |\n|%s\n", t.Title, strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var htmlTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>labctl run {{.S.RunID}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
svg{border:1px solid #ddd}
</style></head><body>
<h1>Run {{.S.RunID}}</h1>
<p>Scenario <b>{{.S.Scenario}}</b> on lab <b>{{.S.Lab}}</b>, outcome <b>{{.S.Outcome}}</b>.</p>
{{range .Tables}}<h2>{{.Title}}</h2><table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}<h2>FCT CDF</h2>
{{.CDF}}
</body></html>
`))

// WriteHTML writes one self-contained HTML file: tables and an SVG FCT CDF.
func WriteHTML(w io.Writer, s *Summary) error {
	return htmlTmpl.Execute(w, struct {
		S      *Summary
		Tables []table
		CDF    template.HTML
	}{s, tables(s), template.HTML(cdfSVG(s))})
}

// WriteRunReports analyses a run archive and writes summary.json and
// report.html into it.
func WriteRunReports(dir string) (*Summary, error) {
	s, err := Analyse(dir)
	if err != nil {
		return nil, err
	}
	for name, write := range map[string]func(io.Writer, *Summary) error{"summary.json": WriteJSON, "report.html": WriteHTML} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		werr := write(f, s)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("run %s: %s: %w", dir, name, werr)
		}
	}
	return s, nil
}

// Render prints a run's report in a format: md, json or html.
func Render(dir, format string, w io.Writer) error {
	s, err := Analyse(dir)
	if err != nil {
		return err
	}
	switch format {
	case "md":
		return WriteMarkdown(w, s)
	case "json":
		return WriteJSON(w, s)
	case "html":
		return WriteHTML(w, s)
	}
	return fmt.Errorf("report format %q: want md, json or html", format)
}
