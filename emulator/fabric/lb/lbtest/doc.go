// Package lbtest holds test aids shared by the load-balancing schemes'
// tests: module wrappers that observe what a scheme does in the engine
// without changing it.
//
// Imports within labctl: only emulator/fabric/lb.
package lbtest
