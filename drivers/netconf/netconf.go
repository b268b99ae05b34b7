package netconf

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	gnc "github.com/Juniper/go-netconf/netconf"
	"golang.org/x/crypto/ssh"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// Session is an open NETCONF session with one switch. Every call takes a
// context: when it ends during the call, the session is closed (the only
// way to stop go-netconf waiting for a reply), so a switch that stops
// answering cannot hold labctl. A device discards an unconfirmed commit,
// an uncommitted candidate and the session's locks when the session ends.
type Session struct {
	device    string
	s         *gnc.Session
	closeOnce sync.Once
	closeErr  error
}

// Dial opens a session on the target's NETCONF endpoint (t.Addr, e.g.
// from sshdrv.DeviceTarget with EndpointNETCONF), with the pool's
// known_hosts and the target's credential. The TCP connection, SSH
// handshake and hello exchange end with ctx or after the pool's dial
// timeout, and leave nothing open when they do.
func Dial(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target) (*Session, error) {
	addr := t.Addr
	fail := func(err error) error { return fmt.Errorf("device %s (%s): netconf: %w", t.Name, addr, err) }
	cfg, closer, err := pool.ClientConfig(t)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fail(err)
	}
	gs, err := newSSHSession(ctx, conn, cfg)
	if err != nil {
		conn.Close()
		return nil, fail(err)
	}
	if len(gs.ServerCapabilities) == 0 { // go-netconf does not report a failed hello
		gs.Close()
		return nil, fail(errors.New("no hello from the device"))
	}
	return &Session{device: t.Name, s: gs}, nil
}

// newSSHSession runs go-netconf's SSH handshake, session open and hello
// exchange on conn, giving up when ctx ends: closing conn unblocks the
// handshake and the hello, but not a session open sent just as the
// connection died, which x/crypto/ssh waits on for ever
// (golang/go#26643). That open is left to finish on its own.
func newSSHSession(ctx context.Context, conn net.Conn, cfg *ssh.ClientConfig) (*gnc.Session, error) {
	type result struct {
		s   *gnc.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := gnc.NewSSHSession(conn, cfg)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		conn.Close()
		go func() {
			if r := <-done; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Close ends the session (once; later calls return the first result).
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.s.Close() })
	return s.closeErr
}

// Error is an rpc-error a device answered, with the operation it answered.
type Error struct {
	Device, Operation string
	Tag, Message      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("device %s: netconf %s: %s: %s", e.Device, e.Operation, e.Tag, e.Message)
}

func (s *Session) exec(ctx context.Context, op, body string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("device %s: netconf %s: %w", s.device, op, err)
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	reply, err := s.s.Exec(gnc.RawMethod(body))
	if !stop() {
		return "", fmt.Errorf("device %s: netconf %s: no answer: %w (session closed)", s.device, op, ctx.Err())
	}
	if err != nil {
		var re *gnc.RPCError
		if errors.As(err, &re) {
			return "", &Error{Device: s.device, Operation: op, Tag: re.Tag, Message: strings.TrimSpace(re.Message)}
		}
		return "", fmt.Errorf("device %s: netconf %s: %w", s.device, op, err)
	}
	if len(reply.Errors) > 0 {
		e := reply.Errors[0]
		return "", &Error{Device: s.device, Operation: op, Tag: e.Tag, Message: strings.TrimSpace(e.Message)}
	}
	return reply.Data, nil
}

// GetConfig returns a datastore's configuration (the children of <data>).
func (s *Session) GetConfig(ctx context.Context, source string) (string, error) {
	data, err := s.exec(ctx, "get-config", "<get-config><source><"+source+"/></source></get-config>")
	if err != nil {
		return "", err
	}
	var d struct {
		Inner string `xml:",innerxml"`
	}
	if err := xml.Unmarshal([]byte(data), &d); err != nil {
		return "", fmt.Errorf("device %s: get-config: %w", s.device, err)
	}
	return strings.TrimSpace(d.Inner), nil
}

const unlock = "<unlock><target><candidate/></target></unlock>"

// cleanupTimeout bounds undoing a failed Stage, which runs even when the
// caller's context has ended (unless that closed the session already).
const cleanupTimeout = 30 * time.Second

// Stage changes the running configuration through the candidate, as a
// careful operator does, and leaves it unconfirmed: lock, edit-config
// (merge), validate, commit confirmed with timeout (the device rolls back
// by itself if Confirm does not follow in time, or the session ends). On
// error the candidate is discarded and the lock released.
func (s *Session) Stage(ctx context.Context, config string, timeout time.Duration) error {
	return s.stage(ctx, config, timeout, "")
}

// StagePersistent is Stage with a persistent confirmed commit (RFC 6241
// 8.4, persist): the change outlives this session, so a dropped session
// does not undo it; any session confirms it with ConfirmPersistent or
// undoes it with CancelPersistent, naming token, and the device rolls it
// back by itself when timeout expires first. On error the commit may
// still have happened (the answer lost with the session): undo it with
// CancelPersistent, which a device answers with an rpc-error if nothing
// is pending.
func (s *Session) StagePersistent(ctx context.Context, config string, timeout time.Duration, token string) error {
	if token == "" {
		return fmt.Errorf("device %s: netconf commit: empty persist token", s.device)
	}
	return s.stage(ctx, config, timeout, "<persist>"+escapeText(token)+"</persist>")
}

// Lock takes the candidate datastore's lock. A device releases the lock
// of a session that ended only once that session is gone, after the last
// rpc it had received: taking the lock from a new session fences off the
// operations of one that dropped.
func (s *Session) Lock(ctx context.Context) error {
	_, err := s.exec(ctx, "lock", "<lock><target><candidate/></target></lock>")
	return err
}

func (s *Session) stage(ctx context.Context, config string, timeout time.Duration, persist string) (err error) {
	if err := s.Lock(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil { // best effort: a closed session releases both anyway
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			_, _ = s.exec(cleanup, "discard-changes", "<discard-changes/>")
			_, _ = s.exec(cleanup, "unlock", unlock)
		}
	}()
	if _, err := s.exec(ctx, "edit-config", "<edit-config><target><candidate/></target><config>"+config+"</config></edit-config>"); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "validate", "<validate><source><candidate/></source></validate>"); err != nil {
		return err
	}
	secs := max(int(timeout.Seconds()), 1)
	_, err = s.exec(ctx, "commit", fmt.Sprintf("<commit><confirmed/><confirm-timeout>%d</confirm-timeout>%s</commit>", secs, persist))
	return err
}

// Confirm makes a staged commit permanent (the confirming commit) and
// releases the lock. Read the running configuration back first.
func (s *Session) Confirm(ctx context.Context) error {
	_, err := s.exec(ctx, "commit", "<commit/>")
	_, _ = s.exec(ctx, "unlock", unlock)
	return err
}

// ConfirmPersistent is the confirming commit of StagePersistent's token,
// from this or any later session. The lock is released if this session
// holds it.
func (s *Session) ConfirmPersistent(ctx context.Context, token string) error {
	_, err := s.exec(ctx, "commit", "<commit><persist-id>"+escapeText(token)+"</persist-id></commit>")
	_, _ = s.exec(ctx, "unlock", unlock)
	return err
}

// Cancel rolls a staged commit back and releases the lock.
func (s *Session) Cancel(ctx context.Context) error {
	return s.cancel(ctx, "<cancel-commit/>")
}

// CancelPersistent rolls StagePersistent's token back, from this or any
// later session.
func (s *Session) CancelPersistent(ctx context.Context, token string) error {
	return s.cancel(ctx, "<cancel-commit><persist-id>"+escapeText(token)+"</persist-id></cancel-commit>")
}

func (s *Session) cancel(ctx context.Context, rpc string) error {
	_, err := s.exec(ctx, "cancel-commit", rpc)
	_, _ = s.exec(ctx, "discard-changes", "<discard-changes/>")
	_, _ = s.exec(ctx, "unlock", unlock)
	return err
}

func escapeText(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v))
	return b.String()
}
