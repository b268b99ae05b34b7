// Package archive is the one place that knows a run directory's layout and
// formats: where the manifest, plan, flows.csv, telemetry line-protocol
// files, raw agent results, provisioning records, summary, report, spool,
// per-point parts and Slurm files live under runs/<run-id>/, how they are
// written (whole or not at all: write to a temporary file, then rename),
// and which manifest formats this labctl reads (FormatVersion; manifests
// without a format field are format 1).
//
// Scenarios writes a run through a Dir; reports, regress, capacity, the
// Slurm executor and the CLI read through one. No other package spells a
// run directory's file names (a test here greps for them). The contents'
// types (the manifest's fields, flows.csv's columns) belong to their
// packages; archive stores and versions them.
//
// It is a leaf: it must stay importable by everything that reads or writes
// a run.
//
// Imports within labctl: none.
package archive
