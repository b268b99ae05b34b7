package sshd

import (
	"path/filepath"
	"testing"
)

func TestRel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "."},
		{"", "."},
		{"/tmp/x", "tmp/x"},
		{"tmp/x", "tmp/x"},
		{"../../etc/passwd", "etc/passwd"},
		{"/a/../../b", "b"},
		{"//a//b/", "a/b"},
	} {
		if got := rel(tc.in); got != tc.want {
			t.Errorf("rel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzRel checks that no client path maps outside the root by name (os.Root
// then guards against symlinks).
func FuzzRel(f *testing.F) {
	for _, s := range []string{"/", "../..", "a/../../b", "/etc/passwd", "..\\..", "./.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if r := rel(p); r != "." && !filepath.IsLocal(r) {
			t.Fatalf("rel(%q) = %q leaves the root", p, r)
		}
	})
}
