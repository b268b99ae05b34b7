// Package regress decides whether a candidate run is worse than a baseline:
// it compares the metrics of the points the two runs share against a
// thresholds file (relative or absolute per metric and size bucket, with
// a noise allowance from repetitions), and writes the verdict as text and
// as JUnit XML for CI systems.
//
// It works on reports.Metrics (one metric of one comparable group of
// points, one value per repetition).
//
// It reads reports.Summary.
//
// Must not import: emulator, drivers, scenarios.
package regress
