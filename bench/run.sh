#!/usr/bin/env bash
# Reruns the benchmarks recorded in bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run XXX -bench . -benchmem -count 3 ./emulator/fabric/ ./perftest/ ./collectors/
go test -run XXX -bench ProvisionLab -benchtime 5x -count 3 -cpu 1 -benchmem ./provision/
go build -o /tmp/labctl-bench ./cmd/labctl
out="$(mktemp -d)"
for s in incast allreduce; do
	/usr/bin/time -f "labctl run $s: %e s wall, %M KiB max RSS" /tmp/labctl-bench run "$s" --out "$out" >/dev/null
done
rm -rf "$out"
