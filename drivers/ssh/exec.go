package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	xssh "golang.org/x/crypto/ssh"
)

// Result is a command that ran to completion, whatever its exit status.
type Result struct {
	Device, Command string
	Stdout, Stderr  []byte
	ExitStatus      int
}

// CommandError is a command that exited non-zero.
type CommandError struct {
	Device, Command string
	ExitStatus      int
	Message         string // stderr (else stdout), trimmed and shortened
}

func (e *CommandError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("device %s: command %q: exit %d", e.Device, e.Command, e.ExitStatus)
	}
	return fmt.Sprintf("device %s: command %q: exit %d: %s", e.Device, e.Command, e.ExitStatus, e.Message)
}

// maxMessage bounds the output quoted in a CommandError; the tail is kept
// because tools print the reason they failed last.
const maxMessage = 2000

// Err is nil for exit status 0, else a *CommandError naming the device, the
// command and what it answered.
func (r *Result) Err() error {
	if r.ExitStatus == 0 {
		return nil
	}
	msg := strings.TrimSpace(string(r.Stderr))
	if msg == "" {
		msg = strings.TrimSpace(string(r.Stdout))
	}
	if len(msg) > maxMessage {
		msg = "..." + strings.ToValidUTF8(msg[len(msg)-maxMessage:], "")
	}
	return &CommandError{Device: r.Device, Command: r.Command, ExitStatus: r.ExitStatus, Message: msg}
}

// Exec runs cmd on t. A non-zero exit is not an error here (see
// Result.Err): errors are dial, authentication, host key and transport
// failures, and cancellation. When ctx ends or CommandTimeout (which
// includes dialling) fires, the remote command is sent KILL and its
// session closed, so it does not outlive the caller.
func (p *Pool) Exec(ctx context.Context, t Target, cmd string) (*Result, error) {
	return p.ExecStdin(ctx, t, cmd, nil)
}

// ExecStdin is Exec with standard input (nil for none).
func (p *Pool) ExecStdin(ctx context.Context, t Target, cmd string, stdin io.Reader) (*Result, error) {
	if p.cfg.CommandTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.CommandTimeout)
		defer cancel()
	}
	s, release, err := p.session(ctx, t)
	if err != nil {
		return nil, err
	}
	defer release()
	defer s.Close()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &stdout, &stderr, stdin
	if err := s.Start(cmd); err != nil {
		return nil, t.errorf("command %q: %w", cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// KILL first (a real sshd forwards it to the process), then close
		// the channel, which OpenSSH turns into SIGHUP for the same effect.
		_ = s.Signal(xssh.SIGKILL)
		_ = s.Close() // not waiting for the peer: a dead link must not hang us
		// A command that ran out of time is news; one its caller cancelled
		// (a poller stopped with the traffic, a run interrupted) was ended
		// on purpose, and a run stopping its pollers printed dozens of
		// warnings that said nothing wrong.
		level := slog.LevelWarn
		if errors.Is(ctx.Err(), context.Canceled) {
			level = slog.LevelDebug
		}
		p.cfg.Logger.Log(context.Background(), level, "command cancelled; remote process killed", "device", t.Name, "command", cmd, "err", ctx.Err())
		return nil, t.errorf("command %q: %w", cmd, ctx.Err())
	}
	res := &Result{Device: t.Name, Command: cmd, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *xssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitStatus = ee.ExitStatus()
	default: // e.g. the connection dropped: no exit status came back
		return nil, t.errorf("command %q: %w", cmd, err)
	}
	p.cfg.Logger.Debug("exec", "device", t.Name, "command", cmd, "exit", res.ExitStatus)
	return res, nil
}

// ForEach runs fn for every target, at most MaxParallel at once, and
// returns the errors joined, each naming its device (fn's error is prefixed
// with "device NAME" unless it already says so). Targets not yet started
// when ctx ends fail with ctx's error.
func (p *Pool) ForEach(ctx context.Context, targets []Target, fn func(ctx context.Context, t Target) error) error {
	_, errs := Each(ctx, p, targets, nil, func(ctx context.Context, t Target) (struct{}, error) {
		return struct{}{}, fn(ctx, t)
	})
	return errors.Join(errs...)
}
