#!/usr/bin/env bash
# Reruns the benchmarks recorded in bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run XXX -bench . -benchmem -count 3 ./emulator/fabric/ ./perftest/ ./collectors/
go test -c -o /tmp/labctl-reports.test ./reports
(cd reports && /usr/bin/time -f "report of 10M flows: %U s user, %S s sys, %e s wall, %M KiB max RSS" \
	/tmp/labctl-reports.test -test.run XXX -test.bench Report10M -test.benchtime 1x)
go build -o /tmp/labctl-bench ./cmd/labctl
out="$(mktemp -d)"
for s in incast allreduce workload-matrix burst; do
	/usr/bin/time -f "labctl run $s: %e s wall, %U s user, %S s sys, %M KiB max RSS" /tmp/labctl-bench run "$s" --out "$out" >/dev/null
done
rm -rf "$out"
