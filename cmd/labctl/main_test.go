package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var labctlBin string

// TestMain builds the real labctl binary: these tests run it as a user does.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labctl-bin-")
	if err != nil {
		panic(err)
	}
	labctlBin = filepath.Join(dir, "labctl")
	if out, err := exec.Command("go", "build", "-o", labctlBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func labctl(t *testing.T, home string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(labctlBin, args...)
	cmd.Env = append(os.Environ(), "LABCTL_HOME="+home, "LABCTL_INFLUX_URL=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestHelpTeaches(t *testing.T) {
	out, _, err := labctl(t, t.TempDir(), "run", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SCENARIO", "--lab", "--influx-url", "Examples:", "leafspine:"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	_, stderr, err := labctl(t, t.TempDir(), "run")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v", err)
	}
	if !strings.Contains(stderr, "incast") {
		t.Errorf("usage error should list built-in scenarios: %q", stderr)
	}
}

// TestRunAndReport is the README's main job: a shipped scenario on the
// built-in emulated lab, ending in a report.
func TestRunAndReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	home, out := t.TempDir(), t.TempDir()
	stdout, stderr, err := labctl(t, home, "run", "incast", "--out", out, "--lab", "leafspine:1x2:9@100")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	var res struct{ RunID, RunDir, Report string }
	if err := json.Unmarshal([]byte(stdout), &struct {
		RunID  *string `json:"run_id"`
		RunDir *string `json:"run_dir"`
		Report *string `json:"report"`
	}{&res.RunID, &res.RunDir, &res.Report}); err != nil {
		t.Fatalf("non-TTY output must be one JSON line: %q: %v", stdout, err)
	}
	if _, err := os.Stat(res.Report); err != nil {
		t.Fatalf("report %s: %v", res.Report, err)
	}
	md, stderr, err := labctl(t, home, "report", res.RunDir, "--format", "md")
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	for _, want := range []string{"incast-16to1", "p99", "Goodput"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, md)
		}
	}
}

func TestLabUpStatusDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	const lab = "leafspine:1x2:2@100"
	if _, stderr, err := labctl(t, home, "lab", "up", lab); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	defer labctl(t, home, "lab", "down")
	out, _, err := labctl(t, home, "lab", "status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sts []struct {
		Name      string
		Alive     bool
		Endpoints []struct{ Up bool }
	}
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		t.Fatalf("status --json: %v: %s", err, out)
	}
	if len(sts) != 1 || !sts[0].Alive || len(sts[0].Endpoints) != 3*2+4 {
		t.Fatalf("want one live lab with 10 endpoints (3 switches x ssh+gnmi, 4 hosts), got %+v", sts)
	}
	for i, e := range sts[0].Endpoints {
		if !e.Up {
			t.Errorf("endpoint %d is down", i)
		}
	}
	if _, stderr, err := labctl(t, home, "run", "allreduce", "--lab", lab, "--out", t.TempDir()); err == nil || !strings.Contains(stderr, "traffic[0].hosts: 8 hosts, but lab "+lab+" has 4") {
		t.Errorf("running an 8-host scenario on a 4-host lab must fail clearly, got %v: %s", err, stderr)
	}
	if out, _, err := labctl(t, home, "lab", "down", lab); err != nil || !strings.Contains(out, "down") {
		t.Fatalf("lab down: %v %s", err, out)
	}
	out, _, _ = labctl(t, home, "lab", "status")
	if !strings.Contains(out, "no emulated lab is up") {
		t.Errorf("after down, status says %q", out)
	}
}

func TestProvisionPlanApplyVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	const lab = "leafspine:1x2:2@100"
	if _, stderr, err := labctl(t, home, "lab", "up", lab); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	defer labctl(t, home, "lab", "down")
	prof := filepath.Join(t.TempDir(), "rnic.yaml")
	os.WriteFile(prof, []byte("trust: dscp\npfc_priorities: [3]\nroce_tos: 106\n"), 0o644)
	out, stderr, err := labctl(t, home, "provision", "plan", "--lab", lab, "--rnic-profile", prof, "--json")
	if err != nil {
		t.Fatalf("plan: %v %s", err, stderr)
	}
	var plan struct {
		Switches []struct{ Switch, Field string }
		RNICs    []struct{ Host, Field, From, To string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.RNICs) != 4*3 || len(plan.Switches) != 0 {
		t.Fatalf("plan --json: %d RNIC changes (want 12), %v: %s", len(plan.RNICs), err, out)
	}
	qos := filepath.Join(t.TempDir(), "qos.yaml")
	os.WriteFile(qos, []byte("pfc_priorities: [3]\nxoff_bytes: 262144\nxon_bytes: 196608\necn:\n  3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}\n"), 0o644)
	if out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos, "--atomic"); err != nil || strings.Count(out, "committed") != 3 {
		t.Fatalf("switch apply: %v %s %s", err, out, stderr)
	}
	if out, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--switch-profile", qos); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("switch verify: %v %s", err, out)
	}
	if _, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--rnic-profile", prof); err == nil {
		t.Fatal("verify before apply must exit non-zero")
	}
	if out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--rnic-profile", prof); err != nil || !strings.Contains(out, "12 changes") {
		t.Fatalf("apply: %v %s %s", err, out, stderr)
	}
	if out, _, err := labctl(t, home, "provision", "verify", "--lab", lab, "--rnic-profile", prof); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("verify after apply: %v %s", err, out)
	}
	if out, _, _ := labctl(t, home, "provision", "plan", "--lab", lab, "--rnic-profile", prof); !strings.Contains(out, "no changes") {
		t.Fatalf("second plan: %s", out)
	}
}
