package emulator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/perftest/agent"
)

// On an emulated host the agent is verified as it is executed, as on a
// real one: the binary uploaded under its hash runs; once its content
// changed (replaced after the upload), the same command is refused.
func TestAgentVerifiedAtExec(t *testing.T) {
	t.Parallel()
	_, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{Seed: 1}, sshdrv.Config{})
	ctx := context.Background()
	h1 := testlab.Target(t, inv, "h1", sshdrv.EndpointSSH)
	content := []byte("agent v1")
	s := sha256.Sum256(content)
	sum := hex.EncodeToString(s[:])
	local := filepath.Join(t.TempDir(), "agent")
	upload := func(b []byte) {
		if err := os.WriteFile(local, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := pool.Upload(ctx, h1, local, agent.BinaryPath(sum), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := agent.BinaryPath(sum) + " run --schedule none.json --host h1 --out out.json --sha256 " + sum
	upload(content)
	res, err := pool.Exec(ctx, h1, cmd)
	if err != nil || strings.Contains(string(res.Stderr), "as shipped") || !strings.Contains(string(res.Stderr), "schedule none.json") {
		t.Fatalf("the shipped agent: %v %q, want it past the check", err, res.Stderr)
	}
	upload([]byte("agent v1, replaced"))
	res, err = pool.Exec(ctx, h1, cmd)
	if err != nil || res.ExitStatus != 1 || !strings.Contains(string(res.Stderr), "not "+sum[:12]+" as shipped") {
		t.Errorf("a replaced agent: %v exit %d %q, want a refusal", err, res.ExitStatus, res.Stderr)
	}
}
