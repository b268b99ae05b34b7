package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

func TestImagePushActivateStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	const lab = "leafspine:1x1:1@100"
	if _, stderr, err := labctl(t, home, "lab", "up", lab, "--engine", "packet"); err != nil {
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
	out, _, err := labctl(t, home, "image", "status", "--lab", lab, "--json")
	var ss []struct {
		Switch, Active string
		Healthy        bool
	}
	if err != nil || json.Unmarshal([]byte(out), &ss) != nil || len(ss) != 2 || ss[0].Switch != "spine1" || ss[0].Active != "" ||
		ss[1].Active != "drill-lb@1.0.0" || !ss[1].Healthy {
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
