package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/labctl/labctl/inventory"
)

func TestOpenFilesPlan(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("fattree:16")
	if err != nil {
		t.Fatal(err)
	}
	need := labFiles(lab)
	if need < 2*len(lab.Hosts) {
		t.Fatalf("fattree:16 needs %d files by the estimate: fewer than two per host", need)
	}
	for _, tc := range []struct {
		name     string
		cur, max uint64
		raise    uint64
		err      []string
	}{
		{"enough", uint64(need), uint64(need), 0, nil},
		{"soft raised to hard", 1024, 1 << 20, 1 << 20, nil},
		{"hard too low", 1024, 4096, 0, []string{"fattree:16", "1024 hosts", "needs about", "RLIMIT_NOFILE", "soft 1024, hard 4096", "ulimit -n 6144"}},
	} {
		raise, err := openFilesPlan(lab, need, syscall.Rlimit{Cur: tc.cur, Max: tc.max})
		if raise != tc.raise {
			t.Errorf("%s: raise to %d, want %d", tc.name, raise, tc.raise)
		}
		if (err != nil) != (tc.err != nil) {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		for _, w := range tc.err {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// TestLabUpNamesTheOpenFilesLimit: under a hard limit too low for the lab,
// `lab up` fails at once, naming the limit and how to raise it.
func TestLabUpNamesTheOpenFilesLimit(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$0" "$@"`, labctlBin, "lab", "up", "--foreground", "fattree:16")
	cmd.Env = append(cmd.Environ(), "LABCTL_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v: %s", err, out)
	}
	for _, w := range []string{"needs about", "open files", "RLIMIT_NOFILE", "hard 256", "ulimit -n"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("message %q lacks %q", out, w)
		}
	}
}
