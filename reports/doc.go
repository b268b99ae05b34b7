// Package reports turns a run archive into numbers and documents. LoadRun
// reads runs/<run-id>/ (manifest.json, flows.csv, telemetry/*.lp through a
// PointReader); Analyse computes per point the FCT statistics overall and
// by flow size, goodput, PFC pause frames, ECN marks, queue peaks and
// telemetry coverage within the point's window, and all-reduce step times
// with algbw/busbw; the renderers write summary.json, Markdown and a
// self-contained HTML report with an SVG FCT CDF. Reports read archives
// only; they never need the lab.
//
// It must not import the emulator, drivers or scenarios (scenarios imports
// it to write the archive).
package reports
