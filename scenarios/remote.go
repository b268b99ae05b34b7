package scenarios

import (
	"context"
	"fmt"
	"path"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// RemoteDir is where labctl keeps its agent and schedules on a host.
const RemoteDir = "/tmp/labctl"

func remoteAgent() string { return path.Join(RemoteDir, "bin", "labctl") }

// shipAgent uploads the agent binary to a host unless the host already has
// a byte-identical copy (checked with sha256sum), so repeated runs are cheap.
func shipAgent(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, local, sum string) error {
	res, err := pool.Exec(ctx, t, "sha256sum "+remoteAgent())
	if err != nil {
		return err
	}
	if res.ExitStatus == 0 && strings.HasPrefix(string(res.Stdout), sum) {
		return nil
	}
	if err := pool.Upload(ctx, t, local, remoteAgent(), 0o755); err != nil {
		return fmt.Errorf("host %s: ship agent: %w", t.Name, err)
	}
	return nil
}

// cleanupAgents kills any agent of this run still alive on a host, after an
// interrupted or failed point: a run never leaves processes behind.
func cleanupAgents(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, runDir string) error {
	res, err := pool.Exec(ctx, t, "pgrep -f "+sshdrv.Quote("labctl agent run --schedule "+runDir))
	if err != nil {
		return err
	}
	pids := strings.Fields(string(res.Stdout))
	if len(pids) == 0 {
		return nil
	}
	res, err = pool.Exec(ctx, t, "kill "+strings.Join(pids, " "))
	if err != nil {
		return err
	}
	return res.Err()
}
