package ssh

import (
	"context"
	"errors"

	xssh "golang.org/x/crypto/ssh"
)

// session opens a session on t's connection, redialling once if the pooled
// connection turned out to be broken. release must be called when done.
func (p *Pool) session(ctx context.Context, t Target) (s *xssh.Session, release func(), err error) {
	for attempt := 0; ; attempt++ {
		sl, c, err := p.client(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		select {
		case sl.sessions <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, t.errorf("waiting for a free session: %w", ctx.Err())
		}
		release := func() { <-sl.sessions }
		s, err := c.newSession(ctx)
		if err == nil {
			return s, release, nil
		}
		release()
		if ctx.Err() != nil {
			return nil, nil, t.errorf("new session: %w", ctx.Err())
		}
		_ = sl.forget(c)
		if attempt == 1 {
			return nil, nil, t.errorf("new session: %w", err)
		}
		p.cfg.Logger.Info("ssh connection broken; redialling", "device", t.Name, "addr", t.Addr, "err", err)
	}
}

// errConnDied is a session open that the connection's end cut short.
var errConnDied = errors.New("the connection closed while a session was being opened")

// newSession opens a session on c, giving up when ctx ends or c dies.
// x/crypto/ssh waits for ever for the answer to a channel open sent just
// as its connection died (golang/go#26643): the open registers its channel
// after the connection's reader closed the others, and nothing closes it.
// The open is left to finish on its own; a session it still yields is
// closed.
func (c *conn) newSession(ctx context.Context) (*xssh.Session, error) {
	type result struct {
		s   *xssh.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.NewSession()
		done <- result{s, err}
	}()
	var err error
	select {
	case r := <-done:
		return r.s, r.err
	case <-c.dead:
		err = errConnDied
	case <-ctx.Done():
		err = ctx.Err()
	}
	go func() {
		if r := <-done; r.s != nil {
			r.s.Close()
		}
	}()
	return nil, err
}
