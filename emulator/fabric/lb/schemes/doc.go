// Package schemes builds the registry of every load-balancing module of
// the fabric twin, from each scheme package's Register function. Callers
// (the emulator, labctl's image commands) take their registry from here;
// the engine never names a scheme.
//
// It imports the interface and every scheme package below it.
//
// Imports within labctl: only emulator/fabric/lb.
package schemes
