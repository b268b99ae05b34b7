// Package schemes builds the registry of every load-balancing module of
// the fabric twin, from each scheme package's Register function. Callers
// (the emulator, labctl's image commands) take their registry from here;
// the engine never names a scheme.
//
// It imports emulator/fabric/lb and the scheme packages below it, nothing
// else of labctl.
package schemes
