#!/usr/bin/env bash
# Issue 13's end-to-end benchmark: `labctl run` of one AliStorage point
# (0.5 load, ECMP, packet engine, seed 1) on each lab given, stage by stage
# from the run's manifest (manifest.json "stages"), beside the simulation
# alone (the fabric twin's benchmark of the same flows, CPU seconds on one
# core) and the archive's size. Default labs: fattree:4 fattree:8
# fattree:12 fattree:16 (1 ms of arrivals) and paper (leafspine:8x8:16@100,
# 10 ms of arrivals: the SELB and ConWeave setting).
#
#   ./bench/e2e.sh [fattree:K | paper]...
#   PROFILE=1 ./bench/e2e.sh fattree:8   # also CPU and allocation profiles of the run (controller and lab)
#   KEEP=1 ...                           # keep the archives (path printed)
#   BIN=DIR ...                          # run DIR/labctl (and DIR/labctl-agent beside it) instead of
#                                        # building this tree's: compare two versions, runs alternated
#   SIM=0 ...                            # skip the simulation-alone figure
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
if [ -n "${BIN:-}" ]; then
	cp "$BIN/labctl" "$BIN/labctl-agent" "$work/"
else
	go build -o "$work/labctl" ./cmd/labctl
	go build -o "$work/labctl-agent" ./cmd/labctl-agent # beside labctl: the agent runs put on hosts
fi
[ "${SIM:-}" = 0 ] || go test -c -o "$work/fabric.test" ./emulator/fabric/
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true # a 1,024-host lab needs ~2,000 open files

load() { cut -d' ' -f1-3 /proc/loadavg; }

for lab in "${@:-fattree:4 fattree:8 fattree:12 fattree:16 paper}"; do
	for l in $lab; do
		case "$l" in
		paper) spec=leafspine:8x8:16@100 scen=bench/scenarios/alistorage-paper.yaml bench=PaperPointAliStorage ;;
		fattree:*) spec=$l scen=bench/scenarios/alistorage-point.yaml bench="PacketEngineScale/k=${l#fattree:}\$" ;;
		*) echo "unknown lab $l (fattree:K or paper)" >&2; exit 2 ;;
		esac
		n=$((${n:-0} + 1))
		out="$work/$n.${l//:/_}" # a lab may be named twice: one directory per run
		mkdir -p "$out"
		echo "== $l ($spec), load average before: $(load)"
		prof=()
		[ "${PROFILE:-}" = 1 ] && prof=(env LABCTL_CPUPROFILE="$out/cpu.prof" LABCTL_MEMPROFILE="$out/allocs.prof")
		/usr/bin/time -o "$out/time" -f "%e %U %S %M" "${prof[@]}" \
			"$work/labctl" run "$scen" --lab "$spec" --out "$out" >"$out/stdout" 2>"$out/progress.jsonl" || {
			echo "labctl run failed:"; tail -5 "$out/progress.jsonl"; continue; }
		read -r wall user sys rss <"$out/time"
		m="$(ls -d "$out"/*/manifest.json)"
		run="$(dirname "$m")"
		echo "load average after: $(load)"
		# Each stage lasts until the next one begins ("done": the run's
		# end); "lab start" is from the run's start to its plan.
		jq -r '
			def t: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$") | (.s + "Z" | fromdateiso8601) + ("0." + (.f // "0") | tonumber);
			(.started | t) as $t0 |
			[.stages[] | {stage, detail, at: (.at | t)}] as $s |
			[range(0; ($s | length) - 1) as $i | {i: $i, stage: $s[$i].stage, detail: $s[$i].detail, d: ($s[$i + 1].at - $s[$i].at)}] |
			"  lab start  \(($s[0].at - $t0) * 100 | round / 100) s",
			(group_by(.stage) | sort_by(.[0].i) | .[] | {stage: .[0].stage, d: (map(.d) | add), detail: (map(.detail // "") | map(select(. != "")) | last), parts: .}
				| "  \(.stage + "          " | .[0:10]) \(.d * 100 | round / 100) s  \(.detail // "")",
				# a stage met more than once (gather: the agents results, then
				# stopping the collectors) is also shown part by part
				(select(.parts | length > 1) | .parts[] | "      \(.d * 100 | round / 100) s  \(.detail // "")"))
		' "$m"
		sim=skipped
		[ "${SIM:-}" = 0 ] || sim="$(cd emulator/fabric && "$work/fabric.test" -test.run XXX -test.bench "$bench" -test.benchtime 1x -test.cpu 1 |
			awk '/cpu-s\/op/ { for (i = 1; i < NF; i++) if ($(i + 1) == "cpu-s/op") print $i }')"
		echo "  end to end ${wall} s wall, CPU ${user} + ${sys} s, max RSS $((rss / 1024)) MiB"
		echo "  simulation alone ${sim} CPU-s (one core, load average $(load))"
		echo "  archive $(du -sm "$run" | cut -f1) MB (raw $(du -sm "$run/raw" | cut -f1) MB, telemetry $(du -sm "$run/telemetry" | cut -f1) MB)"
		[ "${PROFILE:-}" = 1 ] && echo "  profiles: go tool pprof -top $work/labctl $out/cpu.prof (or $out/allocs.prof)"
	done
done
[ "${KEEP:-}" = 1 ] && echo "kept: $work"
true
