#!/usr/bin/env bash
# Slurm executor overhead (bench/README.md "Slurm executor"): on a one-node
# cluster that internal/testslurm starts (needs slurm-wlm, munge and root,
# as scripts/test.sh provides), what the array adds per point with points
# that take no time, then a 16-point matrix of tiny emulated points run
# locally and as an array.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./executor/slurm -run XXX -bench ArrayOverhead -benchtime 1x -cpu 1
go test ./cmd/labctl -run XXX -bench SlurmMatrix16 -benchtime 1x -cpu 1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
