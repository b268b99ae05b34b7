package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunRefusesAnUnknownHostModule: a scenario naming a host module the
// twin does not have is refused before any lab is opened, at its line,
// with the known modules and the nearest one.
func TestRunRefusesAnUnknownHostModule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "s.yaml")
	doc := "name: s\nemulation: {lb: letflow, host_lb: hf2x}\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	if err := os.WriteFile(s, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := labctl(t, dir, "run", "--out", filepath.Join(dir, "runs"), s)
	want := s + `:2: emulation.host_lb: unknown host module (did you mean "hf2t"?); known: flbrc, hf2t`
	if err == nil || !strings.Contains(stderr, want) {
		t.Fatalf("err %v, stderr %q\nwant it to contain %q", err, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("a run directory was created")
	}
}

// TestImageSchemesListsHostModules: --host lists the host modules with
// their parameters (HF²T's paper values among them).
func TestImageSchemesListsHostModules(t *testing.T) {
	t.Parallel()
	out, _, err := labctl(t, t.TempDir(), "image", "schemes", "--host")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(?m)^hf2t `, `(?m)^\s+min_thr\s+20\s`, `(?m)^\s+max_thr\s+80\s`, `(?m)^\s+percentile\s+99\s`,
		`(?m)^flbrc `, `(?m)^\s+restore_us\s+1000\s`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("image schemes --host lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "letflow") {
		t.Error("image schemes --host lists switch schemes")
	}
}
