package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
)

// qosYAML differs from the emulated switches' defaults (the twin's).
const qosYAML = "pfc_priorities: [3]\nxoff_bytes: 262144\nxon_bytes: 196608\necn:\n  3: {kmin_bytes: 100000, kmax_bytes: 800000, pmax_percent: 10}\n"

// upLab starts an emulated lab with 'labctl lab up' in a fresh home (and
// takes it down at the end of the test); it returns the home.
func upLab(t *testing.T, lab string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := t.TempDir()
	if _, stderr, err := labctl(t, home, "lab", "up", lab); err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { labctl(t, home, "lab", "down") })
	return home
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An apply that fails after it changed the switches (an RNIC refuses its
// buffer sizes) still prints its whole report with --json: what each
// switch did, what was made on the RNICs, and the errors.
func TestProvisionApplyJSONReportsALaterFailure(t *testing.T) {
	const lab = "testdata/lab-4hosts.yaml"
	home := upLab(t, lab)
	qos := writeFile(t, "qos.yaml", qosYAML)
	rnic := writeFile(t, "rnic.yaml", "trust: dscp\nbuffer_size: [99999999, 0, 0, 0, 0, 0, 0, 0]\n")
	out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab,
		"--switch-profile", qos, "--rnic-profile", rnic, "--json")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1: %v %s", err, stderr)
	}
	var rep struct {
		Plan     struct{ Switches, RNICs []json.RawMessage }
		Switches []struct{ Switch, Outcome string }
		RNICs    []struct{ Host, Field string }
		Errors   []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, out)
	}
	if len(rep.Plan.Switches) == 0 || len(rep.Switches) != 3 || rep.Switches[0].Outcome != "committed" {
		t.Errorf("switches: %+v", rep.Switches)
	}
	if len(rep.Errors) != 5 || !strings.Contains(rep.Errors[0], "host h1: set buffer_size") || !strings.Contains(rep.Errors[4], "read-back") ||
		len(rep.RNICs) != 4 || rep.RNICs[0].Field != "trust" {
		t.Errorf("RNICs: made %+v, errors %q", rep.RNICs, rep.Errors)
	}
}

// --atomic is a flag of apply only; apply's text output says what it
// changed (not NOW/WANTED) and a plan of an image alone says nothing of
// profiles.
func TestProvisionOutput(t *testing.T) {
	const lab = "leafspine:1x1:1@100"
	home := upLab(t, lab)
	rnic := writeFile(t, "rnic.yaml", "trust: dscp\nroce_tos: 106\n")
	for _, sub := range []string{"plan", "verify"} {
		_, stderr, err := labctl(t, home, "provision", sub, "--lab", lab, "--rnic-profile", rnic, "--atomic")
		if err == nil || !strings.Contains(stderr, "flag provided but not defined: -atomic") {
			t.Errorf("%s --atomic: %v %s", sub, err, stderr)
		}
	}
	out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--rnic-profile", rnic, "--atomic")
	if err != nil || !strings.Contains(out, "WAS  SET TO") || strings.Contains(out, "WANTED") || !strings.Contains(out, "2 changes made") {
		t.Fatalf("apply: %v\n%s%s", err, out, stderr)
	}
	out, _, err = labctl(t, home, "provision", "plan", "--lab", lab, "--image", exampleBundle)
	if err != nil || !strings.Contains(out, "SWITCH") || strings.Contains(out, "profiles") {
		t.Fatalf("plan --image: %v\n%s", err, out)
	}
}

// A failing switch is reported once: in the table, not again on stderr.
func TestProvisionApplyFailurePrintedOnce(t *testing.T) {
	const lab = "testdata/lab-4hosts.yaml"
	home := upLab(t, lab)
	bad := writeFile(t, "rnic.yaml", "buffer_size: [99999999, 0, 0, 0, 0, 0, 0, 0]\n")
	out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--rnic-profile", bad)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1: %v", err)
	}
	if n := strings.Count(out+stderr, "Bad value for buffer_size"); n != 4 {
		t.Errorf("each of 4 host failures must be printed once, found %d:\n%s\n%s", n, out, stderr)
	}
}

// An RNIC that cannot be read stops apply before it changes anything, and
// --json still prints the report that says so (the plan of the switches
// it read, the error, and that nothing was applied).
func TestProvisionApplyJSONReportsAPlanFailure(t *testing.T) {
	const lab = "leafspine:1x1:2@100"
	home := upLab(t, lab)
	qos := writeFile(t, "qos.yaml", qosYAML)
	rnic := writeFile(t, "rnic.yaml", "trust: dscp\ncnp_dscp: 46\n")
	// a plan reads the RNICs: an emulated host writes its sysfs tree when first used
	if _, stderr, err := labctl(t, home, "provision", "plan", "--lab", lab, "--rnic-profile", rnic); err != nil {
		t.Fatalf("plan: %v %s", err, stderr)
	}
	// h1 loses its netdev's sysfs tree (ECN files and PCI link): its RNIC
	// can no longer be read
	sysfs := filepath.Join(emulator.StateDir(home, lab), "devices", "h1", "sys", "class", "net")
	if _, err := os.Stat(sysfs); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sysfs); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--switch-profile", qos, "--rnic-profile", rnic, "--json")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1: %v %s", err, stderr)
	}
	var rep struct {
		Plan     struct{ Switches []json.RawMessage }
		Switches []json.RawMessage
		Errors   []string
		Notes    []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, out)
	}
	if len(rep.Plan.Switches) == 0 || len(rep.Switches) != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "host h1") ||
		len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "nothing applied") {
		t.Fatalf("report: %s", out)
	}
}

// provision and image never start an emulated lab for one command (its
// changes would vanish with it): a topology or emulated lab file that is
// not up, and a name that is nothing at all, are usage errors that say
// what to do, and no lab is left behind.
func TestProvisionRefusesALabThatIsNotUp(t *testing.T) {
	t.Parallel()
	rnic := writeFile(t, "rnic.yaml", "trust: dscp\n")
	for _, tc := range []struct{ lab, want string }{
		{"leafspine:1x1:1@100", "lab leafspine:1x1:1@100 is not up: start it with 'labctl lab up leafspine:1x1:1@100'"},
		{"testdata/lab-4hosts.yaml", "lab testdata/lab-4hosts.yaml is not up: start it with 'labctl lab up testdata/lab-4hosts.yaml'"},
		{"nosuchlab", "lab nosuchlab: not a running lab (see 'labctl lab list'), a lab file or a topology"},
	} {
		for _, args := range [][]string{
			{"provision", "plan", "--lab", tc.lab, "--rnic-profile", rnic},
			{"provision", "apply", "--lab", tc.lab, "--rnic-profile", rnic},
			{"provision", "verify", "--lab", tc.lab, "--rnic-profile", rnic},
			{"image", "status", "--lab", tc.lab},
		} {
			home := t.TempDir()
			start := time.Now()
			_, stderr, err := labctl(t, home, args...)
			if exitStatus(err) != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%v: exit %d, want 2 and %q:\n%s", args, exitStatus(err), tc.want, stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%v took %v: it started something", args, d)
			}
			if sts, _ := emulator.ListStates(home); len(sts) != 0 {
				t.Errorf("%v left a lab: %+v", args, sts)
			}
		}
	}
}

// A running lab's exported lab file names that lab: provision uses it as
// it runs.
func TestProvisionTakesTheExportedLabFile(t *testing.T) {
	const lab = "leafspine:1x1:1@100"
	home := upLab(t, lab)
	st, ok, err := emulator.LoadState(home, lab)
	if err != nil || !ok {
		t.Fatalf("state: %v %v", ok, err)
	}
	rnic := writeFile(t, "rnic.yaml", "trust: dscp\nroce_tos: 106\n")
	if _, stderr, err := labctl(t, home, "provision", "apply", "--lab", lab, "--rnic-profile", rnic); err != nil {
		t.Fatalf("apply: %v %s", err, stderr)
	}
	if out, stderr, err := labctl(t, home, "provision", "verify", "--lab", st.LabFile, "--rnic-profile", rnic); err != nil || !strings.Contains(out, "ok: the lab matches") {
		t.Fatalf("verify on %s: %v\n%s%s", st.LabFile, err, out, stderr)
	}
}
