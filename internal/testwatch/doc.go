// Package testwatch is a watchdog for tests that could hang: armed around
// a step that takes seconds, it ends the test binary when the step is
// still running long after, printing what the step's goroutines wait on.
//
// Without it a hang ends at go test's -timeout with every goroutine of the
// package dumped, and a CI log that keeps only the tail of that dump shows
// idle servers, not the call that never returned. The watchdog prints the
// stuck step's own goroutines last, frames of functions only, with every
// other labctl goroutine summed up a line per kind above them, and writes
// the whole dump to a file it names.
//
// Only tests import it.
//
// Imports within labctl: none.
package testwatch
