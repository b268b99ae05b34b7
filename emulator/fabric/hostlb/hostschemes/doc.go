// Package hostschemes builds the registry of every host module of the
// fabric twin from each module package's Register function. Callers (the
// emulator, labctl's plan checks) take their registry from here; the
// engine never names a module.
//
// Imports within labctl: only emulator/fabric/hostlb, emulator/fabric/lb.
package hostschemes
