package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// gnmiArgs gives a worker the gNMI flags as set, file names made
// absolute, the password by reference only (its variable's name or its
// file, never its value), and nothing for flags not given.
func TestGNMIArgsForWorkers(t *testing.T) {
	t.Setenv("MY_GNMI_PW", "s3cret")
	var got []string
	app := &cli.App{Flags: gnmiFlags(), Action: func(c *cli.Context) (err error) { got, err = gnmiArgs(c); return err }}
	if err := app.Run([]string{"labctl", "--tls-ca", "certs/ca.pem", "--gnmi-username", "-admin", "--gnmi-password-env", "MY_GNMI_PW"}); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	want := []string{"--tls-ca=" + filepath.Join(cwd, "certs/ca.pem"), "--gnmi-username=-admin", "--gnmi-password-env=MY_GNMI_PW"}
	if !slices.Equal(got, want) {
		t.Errorf("worker args %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "s3cret") {
		t.Errorf("the password went on the command line: %q", got)
	}
	if err := app.Run([]string{"labctl"}); err != nil || len(got) != 0 {
		t.Errorf("no flags: %q, %v", got, err)
	}
	e := newSlurmExecutor(&slurmProfile{Labctl: "/opt/labctl"}, want, nil)
	if w := e.Opt.Worker; !slices.Equal(w, append([]string{"/opt/labctl", "worker"}, want...)) {
		t.Errorf("executor's worker command %q", w)
	}
}

// A Slurm run's workers collect gNMI as the run command says: with
// --gnmi-plaintext (and a password file whose name needs quoting) against
// the emulated lab's TLS gNMI, the workers collect no samples, where the
// same run without it collects some. A worker that ignored the flags
// would collect in both; one whose arguments were mangled on their way
// through the batch script would leave its point without a result.
func TestSlurmWorkersTakeTheGNMIFlags(t *testing.T) {
	cl, sc := slurmSetup(t, "name: tls\nlab: leafspine:1x2:2@100\ntelemetry: {interval: 100us}\n"+
		"traffic: [{name: a, pattern: incast, senders: 1, receiver: h1, bytes: 1MiB}]\n")
	pw := filepath.Join(t.TempDir(), "it's a \"pw\" $file")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	samples := func(args ...string) int {
		t.Helper()
		stdout, stderr := mustRun(t, cl.Env, append([]string{"run", sc, "--out", t.TempDir(), "--executor", "slurm", "--slurm-labctl", labctlBin, "--retries", "0"}, args...)...)
		var res struct {
			Dir string `json:"run_dir"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Dir == "" {
			t.Fatalf("run %v: %v %q\n%s", args, err, stdout, stderr)
		}
		if m := readManifest(t, res.Dir); len(m.Points) != 1 || m.Points[0].Status != "ok" {
			t.Fatalf("run %v: points %+v\n%s", args, m.Points, stderr)
		}
		n := 0
		_ = filepath.WalkDir(res.Dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "port.lp" {
				b, _ := os.ReadFile(p)
				n += strings.Count(string(b), "\n")
			}
			return nil
		})
		return n
	}
	if n := samples(); n == 0 {
		t.Fatalf("no port samples from the workers' TLS labs")
	}
	if n := samples("--gnmi-plaintext", "--gnmi-username", "labctl", "--gnmi-password-file", pw); n != 0 {
		t.Errorf("--gnmi-plaintext to TLS labs: the workers collected %d samples", n)
	}
}
