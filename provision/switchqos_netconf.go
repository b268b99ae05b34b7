package provision

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
)

// netconfSession: candidate, validate, a persistent confirmed commit
// (RFC 6241 8.4, persist), read back, then the confirming commit naming
// the persist token (drivers/netconf).
//
// Why persistent: a plain confirmed commit belongs to its session, and
// the switch undoes it when that session ends. Under --atomic, a session
// that drops after labctl decided to confirm every switch (some already
// confirmed) would leave that one switch on its old configuration and the
// others on the new. A persistent commit outlives the session: labctl
// dials again and confirms (or cancels) it by its token, so a drop only
// delays the decision, which every switch then follows. Only the confirm
// timeout, sized to outlast the whole apply, undoes it without labctl.
type netconfSession struct {
	pool    *sshdrv.Pool
	t       sshdrv.Target
	s       *netconf.Session // nil after a drop, until dialled again
	device  string
	confirm time.Duration
	token   string           // the persist token of this apply
	have    switchqos.Config // from the last Read: the previous config
	want    switchqos.Config // staged
}

// newToken is a persist token for one apply: random, so an apply can never
// confirm or cancel another's change.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24)
	return "labctl-" + hex.EncodeToString(b)
}

// Backoff between attempts to reach a switch whose session dropped.
const (
	redialFirst = 20 * time.Millisecond
	redialMax   = time.Second
)

// retry runs op on the session, dialling again after a session that broke
// (anything but an rpc-error the switch answered), until op succeeds, the
// switch answers an rpc-error, or ctx ends. retried says op may have run
// before on a session whose answer was lost.
//
// A new session first takes the candidate lock (fence): the switch may
// still be working through what the dropped session had sent (a commit, a
// confirm), and it releases that session's lock only once it is done with
// it, so every answer after the fence is final, and an rpc-error such as
// "nothing pending" means what it says.
func (n *netconfSession) retry(ctx context.Context, op func(ctx context.Context, s *netconf.Session) error) (retried bool, err error) {
	backoff := redialFirst
	for {
		if n.s == nil {
			err = n.redial(ctx)
		}
		if n.s != nil {
			err = op(ctx, n.s)
			var rpc *netconf.Error
			if err == nil || errors.As(err, &rpc) {
				return retried, err
			}
			n.s.Close()
			n.s = nil
			retried = true
		}
		select {
		case <-ctx.Done():
			return retried, fmt.Errorf("%w (gave up reaching the switch again: %w)", err, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, redialMax)
	}
}

// redial opens a new session and takes the candidate lock on it, waiting
// (within ctx) while the dropped session still holds it.
func (n *netconfSession) redial(ctx context.Context) error {
	s, err := netconf.Dial(ctx, n.pool, n.t)
	if err != nil {
		return err
	}
	backoff := redialFirst
	for {
		err := s.Lock(ctx)
		var rpc *netconf.Error
		if err == nil {
			n.s = s
			return nil
		}
		if !errors.As(err, &rpc) || rpc.Tag != "lock-denied" {
			s.Close()
			return err
		}
		select {
		case <-ctx.Done():
			s.Close()
			return fmt.Errorf("%w (waiting for the dropped session's lock: %w)", err, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, redialMax)
	}
}

// Read is phase one's (and a plan's): one attempt, so a switch that is
// down fails at once.
func (n *netconfSession) Read(ctx context.Context) ([]string, map[string]switchqos.Config, error) {
	run, err := n.s.GetConfig(ctx, "running")
	if err != nil {
		return nil, nil, err
	}
	q, err := netconf.ParseQoS(run)
	if err != nil {
		return nil, nil, fmt.Errorf("device %s: %w", n.device, err)
	}
	n.have = q
	return []string{""}, map[string]switchqos.Config{"": q}, nil
}

// running reads the running config back, through a new session if the
// last one dropped.
func (n *netconfSession) running(ctx context.Context) (switchqos.Config, error) {
	var run string
	if _, err := n.retry(ctx, func(ctx context.Context, s *netconf.Session) (err error) {
		run, err = s.GetConfig(ctx, "running")
		return err
	}); err != nil {
		return switchqos.Config{}, err
	}
	q, err := netconf.ParseQoS(run)
	if err != nil {
		return switchqos.Config{}, fmt.Errorf("device %s: %w", n.device, err)
	}
	return q, nil
}

// Want deletes only what the switch has: NETCONF's delete refuses the rest.
func (n *netconfSession) Want(w switchqos.Config) switchqos.Config {
	w.Remove = w.Remove.Within(n.have)
	return w
}

// Stage is not retried: a stage that fails leaves the switch on its
// previous config. When the session broke, the commit may have happened
// with its answer lost, so it is cancelled by its token from a new
// session (an rpc-error then says nothing was pending, which the read-back
// confirms).
func (n *netconfSession) Stage(ctx context.Context, w switchqos.Config) (bool, error) {
	n.want = w
	err := n.s.StagePersistent(ctx, netconf.RenderQoS(w), n.confirm, n.token)
	var rpc *netconf.Error
	if err == nil || errors.As(err, &rpc) {
		return false, err
	}
	n.s.Close()
	n.s = nil
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), StepTimeout)
	defer cancel()
	if cerr := n.Cancel(cleanup); cerr != nil {
		return false, &tofino.RollbackError{Device: n.device, Err: err, Rollback: cerr}
	}
	return false, fmt.Errorf("%w (the session broke; the change is cancelled by its persist token and the previous config read back)", err)
}

func (n *netconfSession) Check(ctx context.Context, w switchqos.Config) error {
	got, err := n.running(ctx)
	if err != nil {
		return err
	}
	return readBackError(n.device, switchqos.Diff(got, w))
}

// Confirm sends the confirming commit until the switch answers. If a
// retry is refused (nothing pending: an earlier attempt confirmed it and
// lost the answer, or the confirm timeout expired), the read-back decides.
func (n *netconfSession) Confirm(ctx context.Context) error {
	retried, err := n.retry(ctx, func(ctx context.Context, s *netconf.Session) error { return s.ConfirmPersistent(ctx, n.token) })
	if err != nil && retried && isRPC(err) {
		if cerr := n.Check(ctx, n.want); cerr != nil {
			return errors.Join(err, cerr)
		}
		return nil
	}
	return err
}

// Cancel undoes the staged change from whichever session reaches the
// switch. Refused (nothing pending under the token: it was never
// committed, or undone already), the read-back of the previous config
// decides.
func (n *netconfSession) Cancel(ctx context.Context) error {
	_, err := n.retry(ctx, func(ctx context.Context, s *netconf.Session) error { return s.CancelPersistent(ctx, n.token) })
	if err != nil && isRPC(err) {
		if cerr := n.Check(ctx, n.have); cerr != nil {
			return errors.Join(err, cerr)
		}
		return nil
	}
	return err
}

func (n *netconfSession) Close() error {
	if n.s == nil {
		return nil
	}
	return n.s.Close()
}

func isRPC(err error) bool {
	var rpc *netconf.Error
	return errors.As(err, &rpc)
}
