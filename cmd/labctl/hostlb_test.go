package main

import (
	"os"
	"path/filepath"
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
	want := s + `:2: emulation.host_lb: unknown host module (did you mean "hf2t"?); known: hf2t`
	if err == nil || !strings.Contains(stderr, want) {
		t.Fatalf("err %v, stderr %q\nwant it to contain %q", err, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("a run directory was created")
	}
}
