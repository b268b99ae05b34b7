// Package capacity answers "what is the highest load at which the SLO
// still holds?": it searches load (bisection or a grid) with a caller's
// measurement function, which runs a scenario at one load and returns the
// SLO metric, and keeps every measured point as the curve.
//
// It knows nothing of labs or archives; cmd/labctl supplies the
// measurement (a run on a lab, then the run's report).
//
// Must not import: emulator, drivers, scenarios.
package capacity
