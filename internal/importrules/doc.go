// Package importrules holds the test that keeps labctl's layering honest:
// every package states in its package comment which labctl packages it may
// or must not import, in one of the forms below, and the test reads those
// statements and fails on any import that breaks one.
//
//	Imports within labctl: only inventory, internal/yamlpos.
//	Imports within labctl: none.
//	Must not import: emulator, drivers, scenarios.
//
// Names are paths inside the module; a name covers the packages below it
// (drivers covers drivers/ssh). "only" rules check a package's own imports;
// "must not" rules check everything it links, directly or not, since a
// package that reaches the emulator through another still depends on it.
// Test files are not checked: tests may start an emulated lab.
//
// Imports within labctl: none.
package importrules
