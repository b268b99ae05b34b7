package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// agentCounts says how a point's hosts got the agent.
type agentCounts struct{ present, uploaded int }

// shipAgents makes sure every host of hosts has the agent binary (checked
// once per session and host) and returns its SHA-256, which names it on
// the hosts. One host is checked first and given the binary if it lacks
// it; then the others are checked (hosts sharing its home directory, as
// over NFS or in the emulated lab, now have it) and it goes to those
// without it. The progress shows how many had it and how many got it.
func (st *runState) shipAgents(ctx context.Context, sess *session, hosts []string) (string, error) {
	r := st.r
	if r.AgentPath == "" {
		return "", errors.New("no agent binary to put on hosts (Runner.AgentPath)")
	}
	if sess.agentSum == "" {
		sum, err := sshdrv.FileSHA256(r.AgentPath)
		if err != nil {
			return "", fmt.Errorf("agent binary: %w", err)
		}
		sess.agentSum = sum
	}
	sum := sess.agentSum
	var targets []sshdrv.Target
	for _, h := range hosts {
		if !sess.shipped[h] {
			t, err := sess.target(h)
			if err != nil {
				return "", err
			}
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return sum, nil
	}
	r.Progress.Stage(StageAgent, fmt.Sprintf("checking %d hosts for agent %.12s", len(targets), sum))
	var c agentCounts
	missing, err := st.lacking(ctx, sess, targets[:1], &c)
	if err == nil && len(missing) > 0 {
		err = uploadAgent(ctx, sess.ssh, missing[0], r.AgentPath, sum)
		if err == nil {
			c.uploaded++
			sess.shipped[missing[0].Name] = true
		}
	}
	if err == nil {
		checked := time.Now()
		missing, err = st.lacking(ctx, sess, targets[1:], &c)
		if sess.sendTook == 0 {
			sess.sendTook = time.Since(checked) // as many round trips as sending them schedules
		}
	}
	if err == nil && len(missing) > 0 {
		err = sess.ssh.ForEach(ctx, missing, func(ctx context.Context, t sshdrv.Target) error {
			return uploadAgent(ctx, sess.ssh, t, r.AgentPath, sum)
		})
		if err == nil {
			c.uploaded += len(missing)
			for _, t := range missing {
				sess.shipped[t.Name] = true
			}
		}
	}
	r.Progress.Stage(StageAgent, fmt.Sprintf("%d hosts: %d present, %d uploaded", len(targets), c.present, c.uploaded))
	r.Logger.Info("agent", "sha256", sum, "present", c.present, "uploaded", c.uploaded)
	return sum, err
}

// lacking returns the targets without the agent, counting and noting the
// others.
func (st *runState) lacking(ctx context.Context, sess *session, targets []sshdrv.Target, c *agentCounts) ([]sshdrv.Target, error) {
	has, errs := sshdrv.Each(ctx, sess.ssh, targets, nil, func(ctx context.Context, t sshdrv.Target) (bool, error) {
		return agentPresent(ctx, sess.ssh, t, sess.agentSum)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var missing []sshdrv.Target
	for i, t := range targets {
		if has[i] {
			c.present++
			sess.shipped[t.Name] = true
		} else {
			missing = append(missing, t)
		}
	}
	return missing, nil
}
