// Package letflow is the LetFlow load-balancing module (Vanini et al.,
// NSDI 2017): a flow's packets keep their path while they come closer
// together than the flowlet timeout; after a longer gap the next flowlet
// takes a random path.
//
// Imports within labctl: only emulator/fabric/lb.
package letflow
