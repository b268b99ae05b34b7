package capacity

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/reports"
)

// WriteJSON writes the result (capacity.json).
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Answer is the result in one sentence.
func (r *Result) Answer() string {
	switch {
	case !r.Found && len(r.Steps) > 0:
		return fmt.Sprintf("no load meets %s: at the lowest load measured, %g, it is %s", r.SLO, r.Steps[0].Load, r.Steps[0].Measured())
	case !r.Found:
		return "nothing was measured"
	case r.FirstMiss == 0:
		return fmt.Sprintf("every load measured meets %s, up to %g", r.SLO, r.Best)
	}
	s := fmt.Sprintf("the highest load meeting %s is %g (it fails at %g)", r.SLO, r.Best, r.FirstMiss)
	if r.NonMonotonic {
		s += "; the curve is not monotonic, so the answer is uncertain: repeat the points or use a grid"
	}
	return s
}

// WriteMarkdown writes the answer and the curve as a table.
func WriteMarkdown(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "# Capacity: %s\n\n%s.\n\n", r.SLO, answerCap(r))
	if n := r.note(); n != "" {
		fmt.Fprintf(w, "%s\n\n", n)
	}
	fmt.Fprintf(w, "| load | %s | meets | run |\n|---|---|---|---|\n", r.SLO.metric())
	for _, s := range r.Steps {
		meets := "no"
		if s.Meets {
			meets = "yes"
		}
		if _, err := fmt.Fprintf(w, "| %g | %s | %s | %s |\n", s.Load, s.Measured(), meets, s.Ref); err != nil {
			return err
		}
	}
	return nil
}

// note defines the SLO's metric where a reader could take it otherwise:
// a slowdown's ideal FCT includes the base round trip.
func (r *Result) note() string {
	if strings.HasPrefix(r.SLO.Metric, "slowdown") {
		return reports.SlowdownNote
	}
	return ""
}

func answerCap(r *Result) string {
	a := r.Answer()
	return strings.ToUpper(a[:1]) + a[1:]
}

var page = template.Must(template.New("capacity").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Capacity: {{.SLO}}</title>
<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}</style>
</head><body>
<h1>Capacity: {{.SLO}}</h1>
<p>{{.Answer}}. Method: {{.Method}}.</p>
{{with .Note}}<p>{{.}}</p>
{{end}}{{.Plot}}
<table><tr><th>load</th><th>{{.Metric}}</th><th>meets</th><th>run</th></tr>
{{range .Steps}}<tr><td>{{.Load}}</td><td>{{.Value}}</td><td>{{.Meets}}</td><td>{{.Ref}}</td></tr>
{{end}}</table>
</body></html>
`))

// WriteHTML writes a self-contained page with the curve plotted against
// the SLO's limit (steps that failed to measure are left out of the plot).
func WriteHTML(w io.Writer, r *Result) error {
	var xs, ys []float64
	type row struct {
		Load         float64
		Value, Meets string
		Ref          string
	}
	var rows []row
	for _, s := range r.Steps {
		m := "no"
		if s.Meets {
			m = "yes"
		}
		rows = append(rows, row{s.Load, s.Measured(), m, s.Ref})
		if s.Value != nil {
			xs, ys = append(xs, s.Load), append(ys, *s.Value)
		}
	}
	var plot template.HTML
	if len(xs) > 0 {
		var err error
		if plot, err = reports.CurveSVG(r.SLO.metric()+" against load", "load", r.SLO.metric(), xs, ys, r.SLO.Limit, "SLO "+r.SLO.String()); err != nil {
			return err
		}
	}
	return page.Execute(w, map[string]any{"SLO": r.SLO.String(), "Answer": answerCap(r), "Method": r.Method,
		"Plot": plot, "Metric": r.SLO.metric(), "Note": r.note(), "Steps": rows})
}

// Save writes the answer and its curve (capacity.json, .md, .html) into a
// new directory capacity-<name>-<UTC time> under out, and returns it.
func Save(out, name string, r *Result) (string, error) {
	dir := filepath.Join(out, fmt.Sprintf("capacity-%s-%s", name, time.Now().UTC().Format("20060102-150405")))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for file, write := range map[string]func(io.Writer, *Result) error{
		"capacity.json": WriteJSON, "capacity.md": WriteMarkdown, "capacity.html": WriteHTML,
	} {
		if err := archive.WriteFile(filepath.Join(dir, file), func(w io.Writer) error { return write(w, r) }); err != nil {
			return "", err
		}
	}
	return dir, nil
}
