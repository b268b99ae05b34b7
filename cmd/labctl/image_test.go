package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

const exampleBundle = "../../drivers/tofino/testdata/example-bundle"

func TestImageValidate(t *testing.T) {
	out, _, err := labctl(t, t.TempDir(), "image", "validate", exampleBundle)
	if err != nil || out != "ok: drill-lb@1.0.0 (tofino, program drill_lb, lb drill d=2 m=1, 4 files)\n" {
		t.Fatalf("%v %q", err, out)
	}
	bad := t.TempDir()
	if err := os.CopyFS(bad, os.DirFS(exampleBundle)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "pipe", "tofino.bin"), []byte("patched"), 0o644)
	_, stderr, err := labctl(t, t.TempDir(), "image", "validate", bad)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(stderr, filepath.Join(bad, "image.yaml")+":24: files[2].sha256: pipe/tofino.bin has sha256") {
		t.Fatalf("a tampered bundle: %v %s", err, stderr)
	}
	out, _, _ = labctl(t, t.TempDir(), "image", "validate", bad, "--json")
	var v struct {
		Valid    bool
		Problems []struct {
			Line  int
			Field string
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Valid || len(v.Problems) != 1 || v.Problems[0].Line != 24 || v.Problems[0].Field != "files[2].sha256" {
		t.Fatalf("--json: %v %s", err, out)
	}
}

// TestImageValidateChecksTheScheme: the twin's registry judges an image's
// scheme and parameters, at the manifest's lines.
func TestImageValidateChecksTheScheme(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"bad value and unknown parameter", "    d: \"2\"\n    m: \"1\"\n", "    d: \"0\"\n    mm: \"1\"\n",
			[]string{"image.yaml:16: lb.params.d: d=\"0\": want integer >= 1", "image.yaml:17: lb.params.mm: unknown parameter (did you mean \"m\"?)"}},
		{"unknown scheme", "scheme: drill", "scheme: drlil",
			[]string{"image.yaml:14: lb.scheme:", "did you mean \"drill\"?", "known: conga, conweave, drill, ecmp, flb, gemma, letflow, reunion, selb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := t.TempDir()
			if err := os.CopyFS(bad, os.DirFS(exampleBundle)); err != nil {
				t.Fatal(err)
			}
			m, _ := os.ReadFile(filepath.Join(bad, "image.yaml"))
			if !strings.Contains(string(m), tc.from) {
				t.Fatalf("the example manifest has no %q", tc.from)
			}
			os.WriteFile(filepath.Join(bad, "image.yaml"), []byte(strings.Replace(string(m), tc.from, tc.to, 1)), 0o644)
			_, stderr, err := labctl(t, t.TempDir(), "image", "validate", bad)
			if exitStatus(err) != 1 {
				t.Fatalf("exit %d: %s", exitStatus(err), stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestImageSchemesListsParams: the listing shows each scheme's parameters
// with their defaults and rules.
func TestImageSchemesListsParams(t *testing.T) {
	out, _, err := labctl(t, t.TempDir(), "image", "schemes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Name   string
		Params []struct{ Name, Default, Unit, Rule string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ecmp": "", "letflow": "timeout_us=50 us (number > 0)", "drill": "d=2  (integer >= 1) m=1  (integer >= 1)"}
	for _, s := range got {
		var ps []string
		for _, p := range s.Params {
			ps = append(ps, fmt.Sprintf("%s=%s %s (%s)", p.Name, p.Default, p.Unit, p.Rule))
		}
		if w, ok := want[s.Name]; ok && strings.Join(ps, " ") != w {
			t.Errorf("%s: %q, want %q", s.Name, strings.Join(ps, " "), w)
		}
		delete(want, s.Name)
	}
	if len(want) != 0 {
		t.Errorf("not listed: %v", want)
	}
	text, _, err := labctl(t, t.TempDir(), "image", "schemes")
	if err != nil || !strings.Contains(text, "timeout_us") || !strings.Contains(text, "SCHEME") {
		t.Errorf("%v:\n%s", err, text)
	}
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A reference that is not NAME@VERSION is a usage error: exit 2, before
// any lab is opened.
func TestImageActivateBadRefIsAUsageError(t *testing.T) {
	_, stderr, err := labctl(t, t.TempDir(), "image", "activate", "--lab", "no-such-lab.yaml", "foo")
	if exitStatus(err) != 2 || !strings.Contains(stderr, "want NAME@VERSION") || strings.Contains(stderr, "switches failed") {
		t.Fatalf("exit %d: %s", exitStatus(err), stderr)
	}
}

// Activating on a switch whose QoS goes through the SDE shell says on
// stderr that its QoS is back at the defaults; NETCONF switches are not
// named. provision apply with an image and a profile starts the image
// first, then sets the profile.
func TestImageActivateNamesSDESwitchesThatLostQoS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	src, err := inventory.Generate("leafspine:1x1:1@100")
	if err != nil {
		t.Fatal(err)
	}
	src.Switches[1].QoSDriver = "sde" // leaf1
	labFile := filepath.Join(t.TempDir(), "lab.yaml")
	if err := inventory.WriteFile(labFile, src); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := labctl(t, home, "lab", "up", labFile); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	defer labctl(t, home, "lab", "down")
	if _, stderr, err := labctl(t, home, "image", "push", "--lab", labFile, exampleBundle); err != nil {
		t.Fatalf("push: %v %s", err, stderr)
	}
	out, stderr, err := labctl(t, home, "image", "activate", "--lab", labFile, "drill-lb@1.0.0", "--json")
	if err != nil || !strings.Contains(out, `"switchd_restarted":true`) {
		t.Fatalf("activate: %v %s %s", err, out, stderr)
	}
	if !strings.Contains(stderr, "note: bf_switchd restarted on leaf1 (qos_driver: sde)") || strings.Contains(stderr, "spine1") ||
		!strings.Contains(stderr, "labctl provision apply --lab "+labFile+" --switch-profile F") {
		t.Errorf("activate's note on stderr: %q", stderr)
	}
	// nothing restarts when the image is already active and healthy: no note
	if _, stderr, err := labctl(t, home, "image", "activate", "--lab", labFile, "drill-lb@1.0.0"); err != nil || strings.Contains(stderr, "note:") {
		t.Errorf("re-activating a healthy image: %v %q", err, stderr)
	}
	// provision apply with an image and a profile starts the image first,
	// then sets the profile: the read-back after it is clean
	qos := filepath.Join(t.TempDir(), "qos.yaml")
	if err := os.WriteFile(qos, []byte("pfc_priorities: [3]\nxoff_bytes: 262160\nxon_bytes: 196640\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := t.TempDir()
	if _, err := tofino.WriteBundle(v2, tofino.BundleSpec{Name: "drill-lb", Version: "2.0.0", Program: "drill_lb", LB: tofino.LB{Scheme: "drill"}}); err != nil {
		t.Fatal(err)
	}
	if out, stderr, err := labctl(t, home, "provision", "apply", "--lab", labFile, "--image", v2, "--switch-profile", qos); err != nil ||
		!strings.Contains(out, "leaf1   drill-lb@2.0.0  activated") {
		t.Fatalf("provision apply --image --switch-profile: %v\n%s\n%s", err, out, stderr)
	}
	if out, stderr, err := labctl(t, home, "provision", "verify", "--lab", labFile, "--image", v2, "--switch-profile", qos); err != nil {
		t.Fatalf("verify: %v\n%s\n%s", err, out, stderr)
	}
}

func TestImagePushActivateStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	const lab = "leafspine:1x1:1@100"
	if _, stderr, err := labctl(t, home, "lab", "up", lab); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	defer labctl(t, home, "lab", "down")
	if out, stderr, err := labctl(t, home, "image", "push", "--lab", lab, exampleBundle); err != nil || strings.Count(out, "pushed") != 2 {
		t.Fatalf("push: %v %s %s", err, out, stderr)
	}
	if _, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--image", exampleBundle); err == nil {
		t.Fatal("verify before activation must exit non-zero")
	}
	if out, stderr, err := labctl(t, home, "image", "activate", "--lab", lab, "drill-lb@1.0.0", "--switch", "leaf1"); err != nil || !strings.Contains(out, "leaf1   drill-lb@1.0.0  activated") {
		t.Fatalf("activate: %v %s %s", err, out, stderr)
	}
	// an image never pushed fails, and is not recorded as leaf1's last activation
	if _, stderr, err := labctl(t, home, "image", "activate", "--lab", lab, "nothere@1", "--switch", "leaf1"); exitStatus(err) != 1 ||
		!strings.Contains(stderr, "image nothere@1 is not on the switch") {
		t.Fatalf("activating an image never pushed: %v %s", err, stderr)
	}
	out, _, err := labctl(t, home, "image", "status", "--lab", lab, "--json")
	var ss []struct {
		Switch, Active string
		Healthy        bool
		Last           struct{ Action, Image, Outcome string }
	}
	if err != nil || json.Unmarshal([]byte(out), &ss) != nil || len(ss) != 2 || ss[0].Switch != "spine1" || ss[0].Active != "" ||
		ss[1].Active != "drill-lb@1.0.0" || !ss[1].Healthy || ss[1].Last.Image != "drill-lb@1.0.0" || ss[1].Last.Outcome != "activated" {
		t.Fatalf("status: %v %s", err, out)
	}
	if out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--image", exampleBundle); err != nil || !strings.Contains(out, "spine1  drill-lb@1.0.0  activated") ||
		!strings.Contains(out, "leaf1   drill-lb@1.0.0  unchanged") {
		t.Fatalf("provision apply --image: %v %s %s", err, out, stderr)
	}
	if out, _, err := labctl(t, home, "provision", "plan", "--lab", lab, "--image", exampleBundle); err != nil || !strings.Contains(out, "every switch runs drill-lb@1.0.0") {
		t.Fatalf("plan after apply: %v %s", err, out)
	}
	_, stderr, err := labctl(t, home, "image", "rollback", "--lab", lab)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "device leaf1: no previous image to roll back to") {
		t.Fatalf("rollback with no previous image: %v %s", err, stderr)
	}
}
