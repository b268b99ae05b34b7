// Package reports turns a run archive into numbers and documents: FCT
// statistics overall and by flow size, goodput, PFC pause frames, queue
// peaks and telemetry coverage per point, all-reduce step times and bus
// bandwidth; summary.json, Markdown and a self-contained HTML report with
// an SVG FCT CDF. Reports read archives only; they never need the lab.
//
// It must not import the emulator, drivers or scenarios.
package reports
