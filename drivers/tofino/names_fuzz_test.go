package tofino

import "testing"

// FuzzParsePortName: an inventory port name is split into a connector and
// a channel that print back to it, or refused; never a panic.
func FuzzParsePortName(f *testing.F) {
	for _, s := range []string{"1/0", "32/3", "0/0", "1/-1", "1/0/0", "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		conn, chnl, err := ParsePortName(s)
		if err == nil && (conn < 1 || chnl < 0) {
			t.Fatalf("%q: connector %d, channel %d", s, conn, chnl)
		}
	})
}

// FuzzParseRef: an image reference NAME@VERSION from the command line or a
// scenario: both parts are checked, or it is refused.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"drill-lb@1.0.0", "x@", "@1", "a@b@c", "../x@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, version, err := ParseRef(s)
		if err == nil && (name+"@"+version != s || !nameRE.MatchString(name) || !versionRE.MatchString(version)) {
			t.Fatalf("%q accepted as %q @ %q", s, name, version)
		}
	})
}
