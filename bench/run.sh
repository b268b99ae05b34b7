#!/usr/bin/env bash
# Reruns the benchmarks recorded in bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
out="$(mktemp -d)"
trap 'rm -rf "$bin" "$out"' EXIT

go test -run XXX -bench . -benchmem -count 3 ./emulator/fabric/ ./perftest/ ./collectors/

go test -c -o "$bin/reports.test" ./reports
(cd reports && /usr/bin/time -f "report of 10M flows: %U s user, %S s sys, %e s wall, %M KiB max RSS" \
	"$bin/reports.test" -test.run XXX -test.bench Report10M -test.benchtime 1x)

go build -o "$bin/labctl" ./cmd/labctl
go build -o "$bin/labctl-agent" ./cmd/labctl-agent # beside labctl: the agent runs put on hosts
for s in incast allreduce; do
	for engine in packet flow; do
		/usr/bin/time -f "labctl run $s --engine $engine: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
			"$bin/labctl" run "$s" --engine "$engine" --out "$out" >/dev/null
	done
done
for s in workload-matrix burst; do
	/usr/bin/time -f "labctl run $s: %e s wall, %U s user, %S s sys, %M KiB max RSS" "$bin/labctl" run "$s" --out "$out" >/dev/null
done

# Fabric twin, packet engine, on one core (-cpu 1): events per CPU second,
# wall time and peak memory. The papers' run logs a fingerprint of its
# results and counters (equal fingerprints: identical runs).
go test -c -o "$bin/fabric.test" ./emulator/fabric/
for i in 1 2 3; do
	(cd emulator/fabric && /usr/bin/time -f "packet engine benchmarks: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
		"$bin/fabric.test" -test.run XXX -test.bench 'PacketEngineIncast|Papers' -test.benchtime 1x -test.cpu 1 -test.benchmem -test.v)
done
# The packet engine as the fabric grows (fat-trees k = 4..16, AliStorage at
# 0.5 load for 1 ms): each k in its own process for its max RSS.
for k in 4 8 12 16; do
	(cd emulator/fabric && /usr/bin/time -f "packet engine at fattree:$k: %e s wall, %U s user, %S s sys, %M KiB max RSS (load $(cut -d' ' -f1-3 /proc/loadavg))" \
		"$bin/fabric.test" -test.run XXX -test.bench "PacketEngineScale/k=$k\$" -test.benchtime 1x -test.cpu 1 -test.v)
done
# CALLGRIND=1: instructions of the papers' 10 ms run (deterministic, for
# before/after comparisons; takes minutes). Go's preemption signals crash
# callgrind unless async preemption is off.
if [ "${CALLGRIND:-}" = 1 ]; then
	CGO_ENABLED=0 go test -c -o "$bin/fabric-nocgo.test" ./emulator/fabric/
	(cd emulator/fabric && GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$bin/fabric-nocgo.test" -test.run XXX -test.bench PapersWebSearch08 -test.benchtime 1x -test.cpu 1 2>&1 | grep -E 'refs|Benchmark')
	# fattree:8 with cachegrind's first-level cache set to the 2 MB L2 of a
	# core here: its "D1 misses" are L2 misses (the scaling benchmark's
	# figure beside instructions).
	(cd emulator/fabric && GODEBUG=asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=yes --D1=2097152,16,64 --cachegrind-out-file=/dev/null \
		"$bin/fabric-nocgo.test" -test.run XXX -test.bench 'PacketEngineScale/k=8$' -test.benchtime 1x -test.cpu 1 2>&1 | grep -E 'I   refs|D1  misses|Benchmark')
fi

# Provisioning and image activation over real SSH on emulated labs.
go test -run XXX -bench ProvisionLab -benchtime 5x -count 3 -cpu 1 -benchmem ./provision/
go test -run XXX -bench Activate -benchtime 20x -cpu 1 ./drivers/tofino/

# Issue 13's workload point end to end, stage by stage (bench/point.sh).
./bench/point.sh fattree:4 fattree:8

# Issue 13's targets end to end: fattree:4..16 and the paper point, stage
# by stage from the manifest, beside the simulation alone (bench/e2e.sh).
./bench/e2e.sh
