package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentBinaryBuiltOnceFromSource: run from the source tree with no
// labctl-agent beside it (as `go run ./cmd/labctl` is), labctl builds the
// agent into the user cache and reuses it on the next run; the binary is
// the agent (its usage line).
func TestAgentBinaryBuiltOnceFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache))) // the build cache stays; labctl's cache is new
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	bin, err := agentBinary(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := agentBinary(ctx, "")
	if err != nil || again != bin {
		t.Fatalf("second lookup: %q %v, want %q", again, err, bin)
	}
	if second, _ := os.Stat(bin); !second.ModTime().Equal(first.ModTime()) {
		t.Error("the agent was built again")
	}
	out, err := exec.Command(bin).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: labctl-agent run --schedule") {
		t.Errorf("%s without arguments: %v %q", filepath.Base(bin), err, out)
	}
	if _, err := agentBinary(ctx, filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing --agent must fail")
	}
}
