// Package scenarios holds the scenario schema (what to run: lab, traffic
// patterns, telemetry, repetitions), the built-in scenario library, and the
// runner: the run state machine plan -> collect -> traffic -> gather ->
// analyse that writes the run archive runs/<run-id>/.
//
// It drives any lab, real or emulated, through the same drivers and
// collectors.
//
// Must not import: emulator.
package scenarios
