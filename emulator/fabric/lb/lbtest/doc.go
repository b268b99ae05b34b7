// Package lbtest holds test aids shared by the load-balancing schemes'
// tests: a generated fabric, a run of flows on a fresh engine with the
// counters a scheme's test checks, the papers' 128-host WebSearch
// benchmark, and module wrappers that observe what a scheme does without
// changing it.
//
// Imports within labctl: only emulator/fabric, emulator/fabric/lb, inventory, perftest.
package lbtest
