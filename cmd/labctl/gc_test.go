package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGCForEmulatedLab: a process that starts an emulated lab
// of up to 512 hosts collects with GOGC=400 under a 3 GiB soft limit,
// unless the user set GOGC or GOMEMLIMIT, whose values then stand. (Not parallel: the
// collector's settings are the process's; the test restores them.)
func TestTuneGCForEmulatedLab(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	for _, tc := range []struct {
		env         map[string]string
		hosts       int
		set         bool
		wantPercent int
		wantLimit   int64
	}{
		{map[string]string{}, 128, true, emulatedGCPercent, emulatedMemLimit},
		{map[string]string{}, emulatedGCHosts + 1, false, 100, limit}, // a large lab keeps the default
		{map[string]string{"GOGC": "100"}, 128, false, 100, limit},
		{map[string]string{"GOMEMLIMIT": "8GiB"}, 128, false, 100, limit},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(limit)
		set := tuneGCForEmulatedLab(func(k string) string { return tc.env[k] }, tc.hosts)
		gotPercent := debug.SetGCPercent(100)
		gotLimit := debug.SetMemoryLimit(-1)
		if set != tc.set || gotPercent != tc.wantPercent || gotLimit != tc.wantLimit {
			t.Errorf("env %v: set %v, GOGC %d, limit %d; want %v, %d, %d", tc.env, set, gotPercent, gotLimit, tc.set, tc.wantPercent, tc.wantLimit)
		}
	}
	// A small lab, then a large one in the same process: the large one
	// runs with Go's defaults again.
	none := func(string) string { return "" }
	tuneGCForEmulatedLab(none, 128)
	tuneGCForEmulatedLab(none, emulatedGCHosts+1)
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("after a large lab: GOGC %d, limit %d; want Go's defaults 100, %d", p, l, int64(math.MaxInt64))
	}
}
