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

// WriteMarkdown prints the report's tables.
func WriteMarkdown(w io.Writer, s *Summary) error {
	cell := strings.NewReplacer("|", `\|`, "\n", " ")
	var b strings.Builder
	fmt.Fprintf(&b, "# Run %s\n\nScenario **%s** on lab **%s**, outcome **%s**.\n",
		cell.Replace(s.RunID), cell.Replace(s.Scenario), cell.Replace(s.Lab), cell.Replace(s.Outcome))
	for _, t := range tables(s) {
		fmt.Fprintf(&b, "\n## %s\n\n| %s |\n|%s\n", t.Title, strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
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
// or external assets, so it can be mailed or archived as one file.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>labctl run {{.S.RunID}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
svg{border:1px solid #ddd;background:#fff}
</style></head><body>
<h1>Run {{.S.RunID}}</h1>
<p>Scenario <b>{{.S.Scenario}}</b> on lab <b>{{.S.Lab}}</b>, outcome <b>{{.S.Outcome}}</b>.</p>
{{range .Tables}}<h2>{{.Title}}</h2>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}<h2>FCT CDF</h2>
{{.CDF}}
</body></html>
`))

// WriteHTML writes one self-contained HTML report: the tables and an SVG
// plot of the FCT CDFs (one line per point; nil cdfs: no plot data).
func WriteHTML(w io.Writer, s *Summary, cdfs []CDF) error {
	return htmlPage.Execute(w, struct {
		S      *Summary
		Tables []table
		CDF    template.HTML
	}{s, tables(s), template.HTML(cdfSVG(cdfs))}) // cdfSVG escapes the names it prints
}

// Render prints the report of the run archive in dir as md, json or html
// (labctl report).
func Render(dir, format string, w io.Writer) error {
	if format != "md" && format != "json" && format != "html" {
		return fmt.Errorf("report format %q: want md, json or html", format)
	}
	run, err := LoadRun(dir, nil)
	if err != nil {
		return err
	}
	s, cdfs, err := Analyser{}.Analyse(run)
	if err != nil {
		return err
	}
	switch format {
	case "md":
		return WriteMarkdown(w, s)
	case "json":
		return WriteJSON(w, s)
	}
	return WriteHTML(w, s, cdfs)
}

// WriteRunReports analyses the archive in dir (telemetry read with
// collectors.ReadLPFile) and writes summary.json and report.html into it.
func WriteRunReports(dir string) (*Summary, error) { return WriteRunReportsWith(dir, nil) }

// WriteRunReportsWith is WriteRunReports with the line-protocol reader
// given (nil: collectors.ReadLPFile).
func WriteRunReportsWith(dir string, readLP PointReader) (*Summary, error) {
	run, err := LoadRun(dir, readLP)
	if err != nil {
		return nil, err
	}
	s, cdfs, err := Analyser{}.Analyse(run)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "summary.json"), func(w io.Writer) error { return WriteJSON(w, s) }); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "report.html"), func(w io.Writer) error { return WriteHTML(w, s, cdfs) }); err != nil {
		return nil, err
	}
	return s, nil
}

// writeFile writes through a temporary file and renames it, so a crash
// never leaves a truncated summary that looks complete.
func writeFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("report %s: %w", path, werr)
	}
	return nil
}
