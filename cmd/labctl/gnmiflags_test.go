package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// tlsLabUp starts lab (its gNMI over TLS; flags: lab up's) in a fresh
// LABCTL_HOME, stopped when the test ends, and writes a small incast
// scenario sampling every 100us.
func tlsLabUp(t *testing.T, lab string, flags ...string) (home, scenario string) {
	t.Helper()
	home = t.TempDir()
	if _, stderr, err := labctl(t, home, append(append([]string{"lab", "up"}, flags...), lab)...); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { labctl(t, home, "lab", "down") })
	scenario = filepath.Join(home, "s.yaml")
	doc := "name: s\ntelemetry: {interval: 100us}\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	if err := os.WriteFile(scenario, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return home, scenario
}

// 'lab up --gnmi-auth' serves gNMI over TLS with a password; a run on it
// collects telemetry with what the lab file records; --tls-skip-verify
// warns; --gnmi-plaintext to the TLS lab collects nothing.
func TestRunCollectsFromATLSLabWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	t.Parallel()
	const lab = "leafspine:1x2:3@100"
	home, scen := tlsLabUp(t, lab, "--gnmi-auth")
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

// A switch's own gnmi_tls in the lab file decides how a run reaches it:
// on the running TLS lab's exported file, leaf1 told to expect a
// certificate for another name yields no samples (and a warning naming
// leaf1), while the other switches, under the lab's section, yield some.
func TestRunHonoursASwitchsOwnGNMITLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	t.Parallel()
	const name = "leafspine:1x2:2@100"
	home, scen := tlsLabUp(t, name)
	lab, err := inventory.Load(filepath.Join(emulator.StateDir(home, name), "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sw, ok := lab.Switch("leaf1")
	if !ok {
		t.Fatal("no leaf1")
	}
	sw.GNMITLS = &inventory.GNMITLS{ServerName: "not-leaf1"}
	labFile := filepath.Join(t.TempDir(), "lab.yaml")
	if err := inventory.WriteFile(labFile, lab); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	stdout, stderr, err := labctl(t, home, "run", scen, "--lab", labFile, "--out", out)
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "telemetry", "port.lp"))
	perDevice := map[string]int{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			for _, d := range []string{"leaf1", "leaf2", "spine1"} {
				if strings.Contains(line, "device="+d+",") || strings.Contains(line, "device="+d+" ") {
					perDevice[d]++
				}
			}
		}
	}
	if perDevice["leaf1"] != 0 || perDevice["leaf2"] == 0 || perDevice["spine1"] == 0 {
		t.Errorf("port samples per switch %v: want none from leaf1 (wrong server name), some from the others", perDevice)
	}
	if !strings.Contains(stdout+stderr, "leaf1") {
		t.Errorf("no warning names leaf1:\n%s\n%s", stdout, stderr)
	}
}
