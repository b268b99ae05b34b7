package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/perftest/agent"
)

// modulePath is labctl's Go module, whose cmd/labctl-agent is the agent.
const modulePath = "github.com/labctl/labctl"

var agentFlag = &cli.StringFlag{Name: "agent", EnvVars: []string{"LABCTL_AGENT"},
	Usage: "labctl-agent binary to put on hosts (default: the one beside labctl, else built once from labctl's source tree into the user cache)"}

// agentBinary finds the labctl-agent binary a run puts on hosts, in order:
//
//  1. explicit (--agent or $LABCTL_AGENT), when given;
//  2. labctl-agent beside the labctl executable (what `go install
//     ./cmd/...` and a release archive give);
//  3. built from source when labctl runs inside its module's tree (`go run
//     ./cmd/labctl` on a fresh clone): `go build ./cmd/labctl-agent` once
//     per labctl build, into the user's cache directory, keyed by the
//     SHA-256 of the labctl executable, so later runs reuse it.
//
// It is built for this machine's OS and architecture; hosts of another
// need one built for them (GOOS/GOARCH) and passed with --agent.
func agentBinary(ctx context.Context, explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("agent binary: %w", err)
		}
		return explicit, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("agent binary: find labctl: %w", err)
	}
	beside := filepath.Join(filepath.Dir(self), agent.BinaryName)
	if _, err := os.Stat(beside); err == nil {
		return beside, nil
	}
	src, err := moduleDir(ctx)
	if err != nil {
		return "", fmt.Errorf("agent binary: no %s beside %s, and labctl's source is not here to build it from (%v); "+
			"install it with `go install %s/cmd/%s` or pass --agent", agent.BinaryName, self, err, modulePath, agent.BinaryName)
	}
	sum, err := sshdrv.FileSHA256(self)
	if err != nil {
		return "", fmt.Errorf("agent binary: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("agent binary: %w", err)
	}
	out := filepath.Join(cache, "labctl", "agent", sum[:16], agent.BinaryName)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("agent binary: %w", err)
	}
	// a name of its own: two commands building at once must not share one
	tmpf, err := os.CreateTemp(filepath.Dir(out), agent.BinaryName+".building-*")
	if err != nil {
		return "", fmt.Errorf("agent binary: %w", err)
	}
	tmp := tmpf.Name()
	tmpf.Close()
	// Without symbol table and DWARF (2.7 MB instead of 4 MB): what goes
	// to every host; panics still name their functions.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", tmp, "./cmd/"+agent.BinaryName)
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("agent binary: go build ./cmd/%s in %s: %w\n%s", agent.BinaryName, src, err, b)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // CreateTemp made it 0600
		os.Remove(tmp)
		return "", fmt.Errorf("agent binary: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("agent binary: %w", err)
	}
	return out, nil
}

// moduleDir is the root of labctl's source tree around the working
// directory, found with `go env GOMOD`.
func moduleDir(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("the working directory is in no Go module")
	}
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if strings.Trim(m, `"`) != modulePath {
				return "", fmt.Errorf("%s is module %s, not %s", gomod, m, modulePath)
			}
			return filepath.Dir(gomod), nil
		}
	}
	return "", fmt.Errorf("%s names no module", gomod)
}
