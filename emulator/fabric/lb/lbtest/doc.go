// Package lbtest holds test aids shared by the load-balancing schemes'
// tests: a generated fabric, a scheme's module from its registry and the
// check of its parameters, a run of flows on a fresh engine with the
// counters a scheme's test checks, Poisson workloads and the papers'
// 128-host WebSearch benchmark, a fake switch view and packets in flight
// between two of them for testing a module's hooks alone, and module
// wrappers that observe what a scheme does without changing it.
//
// Imports within labctl: only emulator/fabric, emulator/fabric/lb, inventory, perftest.
package lbtest
