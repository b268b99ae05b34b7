package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// 'lab up --gnmi-auth' serves gNMI over TLS with a password; a run on it
// collects telemetry with what the lab file records; --tls-skip-verify
// warns; --gnmi-plaintext to the TLS lab collects nothing.
func TestRunCollectsFromATLSLabWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	t.Parallel()
	const lab = "leafspine:1x2:3@100"
	home := t.TempDir()
	if _, stderr, err := labctl(t, home, "lab", "up", "--gnmi-auth", lab); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { labctl(t, home, "lab", "down") })
	scen := filepath.Join(home, "s.yaml")
	doc := "name: s\ntelemetry: {interval: 100us}\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	if err := os.WriteFile(scen, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	samples := func(args ...string) (int, string) {
		t.Helper()
		out := t.TempDir()
		sout, stderr, err := labctl(t, home, append([]string{"run", scen, "--lab", lab, "--out", out}, args...)...)
		if err != nil {
			t.Fatalf("run %v: %v\n%s\n%s", args, err, sout, stderr)
		}
		files, _ := filepath.Glob(filepath.Join(out, "*", "telemetry", "port.lp"))
		n := 0
		for _, f := range files {
			b, _ := os.ReadFile(f)
			n += strings.Count(string(b), "\n")
		}
		return n, stderr
	}
	if n, stderr := samples(); n == 0 {
		t.Errorf("no port samples from the TLS lab with its CA and password:\n%s", stderr)
	}
	if n, stderr := samples("--tls-skip-verify"); n == 0 || !strings.Contains(stderr, "NOT verified") {
		t.Errorf("--tls-skip-verify: %d samples, want some and a warning:\n%s", n, stderr)
	}
	if n, _ := samples("--gnmi-plaintext"); n != 0 {
		t.Errorf("--gnmi-plaintext to a TLS lab: %d samples", n)
	}
}
