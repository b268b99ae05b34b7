package e2e_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/scenarios"
)

// A run on an emulated lab that serves gNMI over TLS and asks for a
// password collects its telemetry with what the lab file records (the
// CA, the credential's password file); the same run told to trust
// another CA collects nothing.
func TestTelemetryOverTLSWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s, err := scenarios.Parse([]byte(`name: tls
telemetry: {interval: 100us}
traffic:
  - {name: a, pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, seed: 1}
`), "tls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, pool, agent, _ := emulatedLabWith(t, "leafspine:1x2:1", emulator.Options{Seed: 1, GNMIAuth: true})
	if inv.GNMITLS == nil || inv.GNMITLS.CA == "" || inv.GNMITLS.Credential == "" || inv.GNMITLS.Plaintext {
		t.Fatalf("the lab file's gnmi_tls: %+v", inv.GNMITLS)
	}
	other, err := gnmitarget.NewCA(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// samples runs the scenario and returns its port samples and warnings.
	samples := func(sec collectors.GNMISecurity) (int, []string) {
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent, GNMI: sec}
		out, err := r.Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "port.lp"), func(collectors.Point) error { n++; return nil })
		if err != nil && n > 0 {
			t.Fatal(err)
		}
		m := readManifest(t, out.Dir)
		// Every gap lies within the run (a stream that never came up
		// starts its gap at the break, not at the zero time).
		// (a missing file, a run without gaps, reads as no points)
		if err := collectors.ReadLPFile(filepath.Join(out.Dir, "telemetry", "collector_gap.lp"), func(p collectors.Point) error {
			if g := collectors.GapOf(p); g.Since.Before(m.Started.Add(-time.Minute)) {
				t.Errorf("gap of %s from %v, before the run started (%v)", g.Device, g.Since, m.Started)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
		return n, out.Warnings
	}
	if n, errs := samples(collectors.GNMISecurity{}); n == 0 {
		t.Errorf("no port samples over TLS with the lab's CA and password (warnings %q)", errs)
	}
	// Nothing collected, for the certificate's sake (not some other
	// failure that would collect nothing too).
	if n, errs := samples(collectors.GNMISecurity{CAFile: other.File}); n != 0 || !strings.Contains(strings.Join(errs, "\n"), "certificate") {
		t.Errorf("%d port samples with another lab's CA, errors %q: want none, refused for the certificate", n, errs)
	}
}
