// Package suggest finds the known name nearest a mistyped one, for
// "did you mean" in error messages (a load-balancing scheme, a file next
// to the one a scenario names).
//
// Imports within labctl: none.
package suggest
