package main

import (
	"math"
	"runtime/debug"
)

// A command that starts a temporary emulated lab in its own process
// (labctl run --lab fattree:8; capacity, papers and Slurm workers alike,
// through openLab) holds the fabric twin, every device's servers, the
// collectors and the runner in one heap, and makes about 2 GB of garbage
// for a 128-host point: with Go's default (GOGC=100) the collector runs
// often, on one of the machine's two cores. bench/README.md ("Around the
// traffic", branch stages) has the sweep these values come from: GOGC=400
// under a 3 GiB soft limit cut the CPU of a 128-host point by 12-18 %
// (fattree:8) and 16 % (the paper point) for 2-2.5x its memory, and
// leave a 1,024-host one (whose heap the limit then bounds) at the CPU of
// the default. Labs above emulatedGCHosts keep Go's default: the setting
// gained them nothing, and a live heap near the soft limit would make the
// collector run far more often than the default would. A lab served by
// 'labctl lab up' (serveLab) keeps Go's default: its process holds no
// collector or runner, and it was not part of the sweep.
const (
	emulatedGCPercent = 400
	emulatedMemLimit  = 3 << 30
	emulatedGCHosts   = 512
)

// tuneGCForEmulatedLab sets the collector for a process that runs an
// emulated lab, unless GOGC or GOMEMLIMIT is set: the runtime has read
// those, and they win (GOGC=100 restores Go's default, e.g. for a lab
// whose live heap nears the limit, where a soft limit means collecting
// more often than the default would), and for a lab of more than
// emulatedGCHosts hosts, which gets Go's defaults back (a run's matrix may
// start a small lab, then a large one, in one process). It says whether
// it set the emulated-lab values.
func tuneGCForEmulatedLab(getenv func(string) string, hosts int) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	if hosts > emulatedGCHosts {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		return false
	}
	debug.SetGCPercent(emulatedGCPercent)
	debug.SetMemoryLimit(emulatedMemLimit)
	return true
}
