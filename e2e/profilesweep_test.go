package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

// TestMatrixSweepsAFieldOfTheSwitchProfile: a matrix over the RoCE queue's
// ECN kmin inside the switch profile (and over the incast's size) runs
// each kmin on switches that hold it. Each variant that changes kmin
// provisions a derived profile, recorded in its provision/ directory,
// whose plan is that one field on every switch and whose read-back is
// clean; the variant after it with the same kmin does not provision
// again. The twin follows the switches: fewer ECN marks as kmin rises.
func TestMatrixSweepsAFieldOfTheSwitchProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	inv, pool, agent, _ := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1, Engine: "packet"})
	dir := t.TempDir()
	// Marking from kmin up to a kmax above the incast's deepest queue
	// (about 3 MB on this lab), so that kmin decides how much is marked.
	qos := "# lossless RoCE queue\npfc_priorities: [3]\nxoff_bytes: 524288\nxon_bytes: 393216\n" +
		"ecn:\n  3: {kmin_bytes: 100000, kmax_bytes: 4000000, pmax_percent: 100}\n"
	if err := os.WriteFile(filepath.Join(dir, "qos.yaml"), []byte(qos), 0o644); err != nil {
		t.Fatal(err)
	}
	// The lab holds the file as it is: each variant's plan is its kmin.
	base, err := provision.LoadQoSProfile(filepath.Join(dir, "qos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := provision.ApplySwitches(ctx, pool, inv, base, true, nil); err != nil {
		t.Fatalf("apply the base profile: %v %+v", err, rs)
	}
	kmins := []int64{20000, 800000, 1500000}
	sc := filepath.Join(dir, "kmin.yaml")
	if err := os.WriteFile(sc, []byte(fmt.Sprintf(`name: kmin-sweep
provision: {switch_profile: qos.yaml}
traffic:
  - {name: inc, pattern: incast, senders: 8, receiver: h1, bytes: 1MiB}
matrix:
  - path: provision.switch_profile:ecn.3.kmin_bytes
    values: [%d, %d, %d]
  - path: traffic[0].bytes
    values: [1MiB, 2MiB]
`, kmins[0], kmins[1], kmins[2])), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}

	for i, kmin := range kmins {
		// The first variant of each kmin provisions ...
		pdir := filepath.Join(out.Dir, "provision", fmt.Sprintf("kmin_bytes=%d_bytes=1MiB", kmin))
		derived, err := provision.LoadQoSProfile(filepath.Join(pdir, "switch-profile.yaml"))
		if err != nil {
			t.Fatalf("kmin %d: the archive lacks the derived profile: %v", kmin, err)
		}
		if e := derived.ECN[3].Value; e.KminBytes != kmin || e.KmaxBytes != 4000000 || derived.XoffBytes != 524288 {
			t.Errorf("kmin %d: archived profile has %+v, xoff %d", kmin, e, derived.XoffBytes)
		}
		var plan []provision.SwitchChange
		readJSON(t, filepath.Join(pdir, "switch-plan.json"), &plan)
		from := "100000"
		if i > 0 {
			from = fmt.Sprint(kmins[i-1])
		}
		if len(plan) != 3 {
			t.Errorf("kmin %d: plan %+v, want the one field on each of the 3 switches", kmin, plan)
		}
		for _, c := range plan {
			if c.Field != "queue[3].ecn.kmin_bytes" || c.From != from || c.To != fmt.Sprint(kmin) {
				t.Errorf("kmin %d: %s plans %s %s -> %s, want queue[3].ecn.kmin_bytes %s -> %d", kmin, c.Switch, c.Field, c.From, c.To, from, kmin)
			}
		}
		var drift []provision.SwitchChange
		readJSON(t, filepath.Join(pdir, "switch-readback.json"), &drift)
		if len(drift) != 0 {
			t.Errorf("kmin %d: switches read back %+v", kmin, drift)
		}
		// ... the next, same profile, does not.
		if _, err := os.Stat(filepath.Join(out.Dir, "provision", fmt.Sprintf("kmin_bytes=%d_bytes=2MiB", kmin))); err == nil {
			t.Errorf("kmin %d: the variant with the same derived profile provisioned again", kmin)
		}
	}

	// Marks fall from the lowest kmin to the highest, at either size. (Not
	// necessarily at every step: with a CNP per marked packet, the twin's
	// default as in the papers' ns-3, a low kmin also holds the queue lower,
	// so a middle kmin can mark a little more.)
	marks := map[string]uint64{}
	for _, p := range out.Summary.Points {
		if p.Status != "ok" || p.Flows != 8 {
			t.Fatalf("point %s: %s, %d flows", p.Name, p.Status, p.Flows)
		}
		marks[p.Name] = p.ECNMarked
	}
	for _, size := range []string{"1MiB", "2MiB"} {
		var first uint64
		for i, kmin := range kmins {
			name := fmt.Sprintf("inc/kmin_bytes=%d/bytes=%s", kmin, size)
			m, ok := marks[name]
			if !ok {
				t.Fatalf("no point %s in %v", name, marks)
			}
			if i == 0 && m == 0 {
				t.Errorf("%s: no ECN marks at the lowest kmin", name)
			}
			if i == 0 {
				first = m
			}
			if i == len(kmins)-1 && m >= first {
				t.Errorf("%s: %d ECN marks, not fewer than the %d at kmin %d", name, m, first, kmins[0])
			}
		}
	}
	t.Logf("ECN marks by point: %v", marks)
	m := readManifest(t, out.Dir)
	for _, p := range m.Points {
		if _, ok := p.Params["kmin_bytes"]; !ok {
			t.Errorf("point %s: params %v lack kmin_bytes", p.Name, p.Params)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
