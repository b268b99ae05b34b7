package reports

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/labctl/labctl/archive"
)

// Formats are the report formats Write knows.
func Formats() []string { return []string{"md", "json", "html", "csv"} }

// Write prints a summary in one of Formats.
func Write(w io.Writer, s *Summary, format string) error {
	switch format {
	case "md":
		return WriteMarkdown(w, s)
	case "json":
		return WriteJSON(w, s)
	case "html":
		return WriteHTML(w, s)
	case "csv":
		return WriteCSV(w, s)
	}
	return checkFormat(format)
}

// checkFormat says whether Write knows a format.
func checkFormat(format string) error {
	if slices.Contains(Formats(), format) {
		return nil
	}
	return fmt.Errorf("report format %q: want one of %s", format, strings.Join(Formats(), ", "))
}

// WriteJSON writes summary.json's content.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func title(s *Summary) string {
	if len(s.Runs) > 0 {
		return "Comparison of runs " + strings.Join(s.Runs, ", ")
	}
	return "Run " + s.RunID
}

// WriteMarkdown prints the comparison sentences and the report's tables.
func WriteMarkdown(w io.Writer, s *Summary) error {
	cell := strings.NewReplacer("|", `\|`, "\n", " ")
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nScenario **%s** on lab **%s**, outcome **%s**.\n",
		cell.Replace(title(s)), cell.Replace(s.Scenario), cell.Replace(s.Lab), cell.Replace(s.Outcome))
	if n := outcomeNote(s.Outcome); n != "" {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "\n**Warning:** %s\n", cell.Replace(w))
	}
	if h := headlines(s); len(h) > 0 {
		fmt.Fprintf(&b, "\n## Against %s\n\n", cell.Replace(s.Baseline))
		for _, l := range h {
			fmt.Fprintf(&b, "- %s\n", cell.Replace(l))
		}
		if n := headlineNote(h); n != "" {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
	}
	for _, t := range tables(s) {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Title)
		if t.Note != "" {
			fmt.Fprintf(&b, "%s\n\n", t.Note)
		}
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
		for _, r := range t.Rows {
			for i := range r {
				r[i] = cell.Replace(r[i])
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// htmlPage is self-contained: inline CSS, inline SVG, no scripts, links
// or external assets, so it can be mailed or archived as one file. The
// per-point time series fold away in <details>.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>labctl: {{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{display:inline-block;margin:0.5em;border:1px solid #ddd}
summary{cursor:pointer;font-weight:bold;margin:0.5em 0}
</style></head><body>
<h1>{{.Title}}</h1>
<p>Scenario <b>{{.S.Scenario}}</b> on lab <b>{{.S.Lab}}</b>, outcome <b>{{.S.Outcome}}</b>.</p>
{{with .OutcomeNote}}<p>{{.}}</p>
{{end}}{{range .S.Warnings}}<p><b>Warning:</b> {{.}}</p>
{{end}}{{if .Headlines}}<h2>Against {{.S.Baseline}}</h2>
<ul>{{range .Headlines}}<li>{{.}}</li>{{end}}</ul>
{{with .HeadlineNote}}<p>{{.}}</p>
{{end}}{{end}}{{if .Plots}}<h2>Plots</h2>
{{range .Plots}}<figure>{{.SVG}}</figure>
{{end}}{{end}}{{range .Tables}}<h2>{{.Title}}</h2>
{{with .Note}}<p>{{.}}</p>
{{end}}<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{if .Series}}<h2>Time series</h2>
{{range .Series}}<details><summary>{{.Point}}</summary>
{{range .Plots}}<figure>{{.SVG}}</figure>
{{end}}</details>
{{end}}{{end}}</body></html>
`))

type pointPlots struct {
	Point string
	Plots []figure
}

// WriteHTML writes one self-contained HTML report: the comparison
// sentences, plots (FCT vs load, slowdown by size, FCT CDFs), the tables
// and per point the queue-depth and PFC-pause time series.
func WriteHTML(w io.Writer, s *Summary) error {
	var plots []figure
	for _, f := range []func() ([]figure, error){
		func() ([]figure, error) { return fctVsLoad(s.Groups) },
		func() ([]figure, error) { return slowdownBySize(s) },
		func() ([]figure, error) { return cdfPlots(s) },
		func() ([]figure, error) { return goodputPlots(s) },
	} {
		fs, err := f()
		if err != nil {
			return err
		}
		plots = append(plots, fs...)
	}
	var series []pointPlots
	for _, p := range s.Points {
		pp := pointPlots{Point: pointName(p)}
		for _, f := range []func() (*figure, error){
			func() (*figure, error) {
				return seriesPlot("Queue depth, deepest queues: "+pp.Point, "depth (KiB)", p.WindowStartNs, p.QueueSeries)
			},
			func() (*figure, error) {
				return seriesPlot("PFC pause frames sent per second by tier: "+pp.Point, "pause frames / s", p.WindowStartNs, p.PFCSeries)
			},
		} {
			fig, err := f()
			if err != nil {
				return err
			}
			if fig != nil {
				pp.Plots = append(pp.Plots, *fig)
			}
		}
		figs, err := seriesFigures(p, pp.Point)
		if err != nil {
			return err
		}
		pp.Plots = append(pp.Plots, figs...)
		if len(pp.Plots) > 0 {
			series = append(series, pp)
		}
	}
	h := headlines(s)
	return htmlPage.Execute(w, struct {
		Title        string
		S            *Summary
		Headlines    []string
		HeadlineNote string
		Plots        []figure
		Tables       []table
		Series       []pointPlots
		OutcomeNote  string
	}{title(s), s, h, headlineNote(h), plots, tables(s), series, outcomeNote(s.Outcome)})
}

// outcomeNote says what an outcome other than ok means for the figures
// that follow.
func outcomeNote(outcome string) string {
	switch outcome {
	case "degraded":
		return "Degraded: every point ran, but telemetry is incomplete (gaps in the archive, or points InfluxDB lacks); " +
			"the warnings say which device, path and time span. Fabric counters over those spans are missing or coarser."
	case "partial":
		return "Partial: some points failed; the report covers the others."
	case "failed":
		return "Failed: the run stopped; the report covers what ran."
	case "running":
		return "Running: the run had not ended when this was read (it is still going, or its process died)."
	}
	return ""
}

// headlineNote is the slowdown definition when a headline states a
// slowdown.
func headlineNote(h []string) string {
	for _, l := range h {
		if strings.Contains(l, "slowdown") {
			return SlowdownNote
		}
	}
	return ""
}

// Render prints the report of the run archive in dir in one of Formats
// with the default settings (labctl report).
func Render(dir, format string, w io.Writer) error {
	return Analyser{}.Render([]string{dir}, format, w)
}

// Render prints the report of one run archive, or the comparison of
// several (labctl compare), in one of Formats.
func (a Analyser) Render(dirs []string, format string, w io.Writer) error {
	if err := checkFormat(format); err != nil {
		return err // before reading any archive
	}
	var runs []*Run
	for _, d := range dirs {
		run, err := LoadRun(d, nil)
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	var s *Summary
	var err error
	if len(runs) == 1 {
		s, err = a.Analyse(runs[0])
	} else {
		s, err = a.Compare(runs)
	}
	if err != nil {
		return err
	}
	if err := Write(w, s, format); err != nil {
		return err
	}
	for _, msg := range s.Warnings {
		if a.Warn != nil {
			a.Warn(msg)
		}
	}
	return nil
}

// WriteRunReports analyses the archive in dir (telemetry read with
// collectors.ReadLPFile) and writes summary.json and report.html into it.
func WriteRunReports(dir string) (*Summary, error) { return WriteRunReportsAs(dir, nil) }

// WriteRunReportsAs is WriteRunReports with the manifest as final edits
// it (nil: as it is): the runner writes the reports before it records
// the run's end, so a crash in analysis still shows as one, yet the
// reports must say the outcome the run ends with, never "running".
func WriteRunReportsAs(dir string, final func(*Manifest)) (*Summary, error) {
	run, err := LoadRun(dir, nil)
	if err != nil {
		return nil, err
	}
	if final != nil {
		final(&run.Manifest)
	}
	s, err := Analyse(run)
	if err != nil {
		return nil, err
	}
	ad := archive.Open(dir)
	if err := archive.WriteFile(ad.Summary(), func(w io.Writer) error { return WriteJSON(w, s) }); err != nil {
		return nil, err
	}
	if err := archive.WriteFile(ad.ReportHTML(), func(w io.Writer) error { return WriteHTML(w, s) }); err != nil {
		return nil, err
	}
	return s, nil
}
