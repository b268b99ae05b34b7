package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

// The formats every verb that prints results takes.
const (
	formatTable = "table" // aligned columns for a terminal
	formatJSON  = "json"  // the result as one line of JSON: struct fields in a fixed order, map keys sorted
	formatMD    = "md"    // the table as Markdown
)

// resultFormats are what every --format accepts.
var resultFormats = []string{formatTable, formatJSON, formatMD}

// formatFlag is --format of a verb that prints results; Formats are the
// formats it takes: table, json, md and the verb's own (report: html, csv).
type formatFlag struct {
	*cli.StringFlag
	Formats []string
}

// newFormatFlag is --format with default def ("": the verb's output
// depends on whether stdout is a terminal) and the verb's extra formats.
func newFormatFlag(def string, more ...string) *formatFlag {
	known := append(slices.Clone(resultFormats), more...)
	return &formatFlag{StringFlag: &cli.StringFlag{Name: "format", Value: def, Usage: formatUsage(known)}, Formats: known}
}

// formatUsage is every --format's Usage: one sentence naming its formats.
func formatUsage(known []string) string {
	return "output `FORMAT`: " + strings.Join(known, " | ")
}

// jsonAlias is --json, kept for scripts written before --format.
var jsonAlias = &cli.BoolFlag{Name: "json", Usage: "same as --format json"}

// checkFormat is the command's --format (json when --json is given),
// refused with the known formats when the command does not know it.
func checkFormat(c *cli.Context) (string, error) {
	var known []string
	for _, f := range c.Command.Flags {
		if ff, ok := f.(*formatFlag); ok {
			known = ff.Formats
		}
	}
	format := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && format != formatJSON {
			return "", exitError{2, fmt.Errorf("--json and --format %s exclude each other", format)}
		}
		format = formatJSON
	}
	if format != "" && !slices.Contains(known, format) {
		return "", exitError{2, fmt.Errorf("--format %q: unknown; known formats: %s", format, strings.Join(known, ", "))}
	}
	return format, nil
}

// table is a result as rows under a heading, printed aligned (table) or
// as Markdown (md).
type table struct {
	Head []string
	Rows [][]string
	// Foot is printed after the rows (a count, a verdict): a line of its
	// own in table, a paragraph in md.
	Foot []string
}

// add appends a row.
func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// printResult prints a verb's result in format: json prints v, table and
// md print the table t makes. text, when not nil, is what table prints
// instead (a verb whose terminal output is prose, not columns).
func printResult(w io.Writer, format string, v any, t func() table, text func(io.Writer) error) error {
	switch format {
	case formatJSON:
		return writeJSON(w, v)
	case formatMD:
		return t().markdown(w)
	default:
		if text != nil {
			return text(w)
		}
		return t().aligned(w)
	}
}

// writeJSON is the one JSON encoding of results: one line (a stream of
// results reads as JSON lines; jq pretty-prints), with <, > and & as they
// are (SLOs and messages hold them).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (t table) aligned(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(t.Head) > 0 {
		fmt.Fprintln(tw, strings.Join(t.Head, "\t"))
	}
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range t.Foot {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	return nil
}

func (t table) markdown(w io.Writer) error {
	var b strings.Builder
	if len(t.Head) > 0 {
		row := func(cells []string) {
			b.WriteString("|")
			for i := range t.Head {
				c := ""
				if i < len(cells) {
					c = cells[i]
				}
				b.WriteString(" " + mdCell(c) + " |")
			}
			b.WriteString("\n")
		}
		row(t.Head)
		b.WriteString("|" + strings.Repeat(" --- |", len(t.Head)) + "\n")
		for _, r := range t.Rows {
			row(r)
		}
	}
	for _, f := range t.Foot {
		b.WriteString("\n" + f + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell keeps a cell inside its Markdown column.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// printAction prints what an action verb (lab up, lab fault, regress
// promote ...) did: json prints v, md one row under head, table the verb's
// sentence text as it was before --format.
func printAction(format string, v any, text string, head, row []string) error {
	return printResult(os.Stdout, format, v, func() table {
		return table{Head: head, Rows: [][]string{row}}
	}, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, text)
		return err
	})
}
