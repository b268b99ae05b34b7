package scenarios

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/perftest/agent"
)

// The agent goes to a host once per version: it lives there under its
// content hash (agent.BinaryPath) and is uploaded only when missing.

// agentPresent makes sure t has labctl's home directory (agent.HomeDir,
// created readable by the user only) and says whether it has the agent
// binary whose SHA-256 is sum.
func agentPresent(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, sum string) (bool, error) {
	res, err := pool.Exec(ctx, t, "mkdir -p -m 700 "+agent.HomeDir)
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return false, fmt.Errorf("host %s: create %s: %w", t.Name, agent.HomeDir, err)
	}
	res, err = pool.Exec(ctx, t, "sha256sum "+agent.BinaryPath(sum))
	if err != nil {
		return false, err
	}
	return res.ExitStatus == 0 && strings.HasPrefix(string(res.Stdout), sum), nil
}

// uploadAgent puts the agent binary local (SHA-256 sum) on t. The upload
// goes to a temporary name renamed into place, so hosts sharing a home
// directory never see a partial binary.
func uploadAgent(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, local, sum string) error {
	if err := pool.Upload(ctx, t, local, agent.BinaryPath(sum), 0o755); err != nil {
		return fmt.Errorf("host %s: ship agent: %w", t.Name, err)
	}
	return nil
}

// agentCommand is the command line that runs the agent sum on a host.
func agentCommand(sum, sched, host, out string, maxConcurrent int) string {
	args := []string{agent.BinaryPath(sum), "run",
		"--schedule", sshdrv.Quote(sched), "--host", sshdrv.Quote(host), "--out", sshdrv.Quote(out),
		"--sha256", sum} // verified as it runs, not only as it was uploaded (after --schedule: cleanupAgents matches on it)
	if maxConcurrent > 0 {
		args = append(args, "--max-concurrent", fmt.Sprint(maxConcurrent))
	}
	return strings.Join(args, " ")
}

// cleanupAgents kills any agent of this run still alive on a host, after an
// interrupted or failed point: a run never leaves processes behind.
func cleanupAgents(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, runDir string) error {
	res, err := pool.Exec(ctx, t, "pgrep -f "+sshdrv.Quote(agent.BinaryName+" run --schedule "+runDir))
	if err != nil {
		return err
	}
	pids := strings.Fields(string(res.Stdout))
	if len(pids) == 0 {
		return nil
	}
	for _, p := range pids { // what the host printed goes back into a command: numbers only
		if _, err := strconv.Atoi(p); err != nil {
			return fmt.Errorf("host %s: pgrep answered %q, not process ids", t.Name, p)
		}
	}
	res, err = pool.Exec(ctx, t, "kill "+strings.Join(pids, " "))
	if err != nil {
		return err
	}
	return res.Err()
}
