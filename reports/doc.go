// Package reports turns run archives into numbers and documents. LoadRun
// reads runs/<run-id>/ (manifest.json now; flows.csv and telemetry/*.lp as
// streams when Analyse asks); Analyse computes per point the FCT and
// slowdown statistics overall and by flow size (HdrHistogram: memory grows
// with points and buckets, not flows), goodput, PFC pauses per switch tier,
// ECN marks, queue depth, RNIC out-of-order packets, all-reduce
// bandwidths, the throughput of its long flows over time (victims of a
// burst among them) and its fabric ports' utilisation and PAUSE, then groups repetitions and compares schemes the way the
// papers do; Compare does the same across runs. The renderers write
// summary.json, Markdown, CSV and a self-contained HTML report with SVG
// plots. docs/reports.md defines every metric. Reports read archives only;
// they never need the lab.
//
// Scenarios imports it to write the archive.
//
// Must not import: emulator, drivers, scenarios.
package reports
