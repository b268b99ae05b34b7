// Package shtest splits a command line into words the way a real POSIX
// shell (/bin/sh) does, for tests that check that labctl's remote commands
// quote what they interpolate: only tests import it.
//
// Imports within labctl: none.
package shtest
