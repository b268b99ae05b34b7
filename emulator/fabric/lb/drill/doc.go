// Package drill is the DRILL load-balancing module (Ghorbani et al.,
// SIGCOMM 2017), DRILL(d, m): per packet, the least-loaded of d random
// candidates and the m best remembered from the last decision.
//
// Imports within labctl: only emulator/fabric/lb.
package drill
