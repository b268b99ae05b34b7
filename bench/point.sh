#!/usr/bin/env bash
# Issue 13's workload point end to end, stage by stage: `labctl run` of
# bench/scenarios/alistorage-point.yaml (AliStorage at 0.5 load, 1 ms of
# arrivals, ECMP, packet engine, seed 1) on each lab given (default
# fattree:4 fattree:8). Prints each progress stage with the seconds since
# the run started, then wall and CPU time, and the archive's size.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
out="$(mktemp -d)"
trap 'rm -rf "$bin" "$out"' EXIT
go build -o "$bin/labctl" ./cmd/labctl
go build -o "$bin/labctl-agent" ./cmd/labctl-agent # beside labctl: the agent runs put on hosts
for lab in "${@:-fattree:4 fattree:8}"; do
	for l in $lab; do
		echo "== $l (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
		/usr/bin/time -f "wall %e s, CPU %U s user + %S s sys, max RSS %M KiB" \
			"$bin/labctl" run bench/scenarios/alistorage-point.yaml --lab "$l" --out "$out/$l" 2>"$out/progress.jsonl" >/dev/null || true
		grep "^{" "$out/progress.jsonl" | jq -r 'select(.event == "stage") | "\(.elapsed_s)\t\(.stage)\t\(.detail // "")"'
		tail -1 "$out/progress.jsonl"
		du -sh "$out/$l"
	done
done
