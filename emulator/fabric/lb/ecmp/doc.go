// Package ecmp is the ECMP load-balancing module: each switch hashes a
// packet's 5-tuple with its own seed. The packet engine forwards the same
// way when a switch has no module; this package gives ECMP a name in the
// registry (and switch images) and a reference for other modules' fallbacks.
//
// Imports within labctl: only emulator/fabric/lb.
package ecmp
