package netconf

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"

	gnc "github.com/Juniper/go-netconf/netconf"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// Session is an open NETCONF session with one switch.
type Session struct {
	device string
	s      *gnc.Session
}

// Dial opens a session on the target's NETCONF endpoint (addr), with the
// pool's known_hosts and the target's credential.
func Dial(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, addr string) (*Session, error) {
	cfg, closer, err := pool.ClientConfig(t)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	type result struct {
		s   *gnc.Session
		err error
	}
	ch := make(chan result, 1)
	go func() { s, err := gnc.DialSSH(addr, cfg); ch <- result{s, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("device %s (%s): netconf: %w", t.Name, addr, r.err)
		}
		return &Session{device: t.Name, s: r.s}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("device %s (%s): netconf: %w", t.Name, addr, ctx.Err())
	}
}

// Close ends the session.
func (s *Session) Close() error { return s.s.Close() }

// Error is an rpc-error a device answered, with the operation it answered.
type Error struct {
	Device, Operation string
	Tag, Message      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("device %s: netconf %s: %s: %s", e.Device, e.Operation, e.Tag, e.Message)
}

func (s *Session) exec(op, body string) (string, error) {
	reply, err := s.s.Exec(gnc.RawMethod(body))
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
func (s *Session) GetConfig(source string) (string, error) {
	data, err := s.exec("get-config", "<get-config><source><"+source+"/></source></get-config>")
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

// Stage changes the running configuration through the candidate, as a
// careful operator does, and leaves it unconfirmed: lock, edit-config
// (merge), validate, commit confirmed with timeout (the device rolls back
// by itself if Confirm does not follow). On error the candidate is
// discarded, the confirmed commit cancelled and the lock released.
func (s *Session) Stage(config string, timeout time.Duration) (err error) {
	if _, err := s.exec("lock", "<lock><target><candidate/></target></lock>"); err != nil {
		return err
	}
	committed := false
	defer func() {
		if err != nil {
			if committed {
				_, _ = s.exec("cancel-commit", "<cancel-commit/>")
			}
			_, _ = s.exec("discard-changes", "<discard-changes/>")
			_, _ = s.exec("unlock", "<unlock><target><candidate/></target></unlock>")
		}
	}()
	if _, err := s.exec("edit-config", "<edit-config><target><candidate/></target><config>"+config+"</config></edit-config>"); err != nil {
		return err
	}
	if _, err := s.exec("validate", "<validate><source><candidate/></source></validate>"); err != nil {
		return err
	}
	secs := max(int(timeout.Seconds()), 1)
	if _, err := s.exec("commit", fmt.Sprintf("<commit><confirmed/><confirm-timeout>%d</confirm-timeout></commit>", secs)); err != nil {
		return err
	}
	committed = true
	return nil
}

// Confirm reads the running configuration back, lets check accept it, and
// confirms the staged commit; if check refuses, the commit is cancelled.
// The lock is released either way.
func (s *Session) Confirm(check func(running string) error) (err error) {
	defer func() { _, _ = s.exec("unlock", "<unlock><target><candidate/></target></unlock>") }()
	running, err := s.GetConfig("running")
	if err == nil && check != nil {
		if cerr := check(running); cerr != nil {
			err = fmt.Errorf("device %s: read-back after commit: %w", s.device, cerr)
		}
	}
	if err != nil {
		_, _ = s.exec("cancel-commit", "<cancel-commit/>")
		return err
	}
	_, err = s.exec("commit", "<commit/>")
	return err
}

// Cancel rolls a staged commit back and releases the lock.
func (s *Session) Cancel() error {
	_, err := s.exec("cancel-commit", "<cancel-commit/>")
	_, _ = s.exec("discard-changes", "<discard-changes/>")
	_, _ = s.exec("unlock", "<unlock><target><candidate/></target></unlock>")
	return err
}

// Apply is Stage then Confirm on one device.
func (s *Session) Apply(config string, timeout time.Duration, check func(running string) error) error {
	if err := s.Stage(config, timeout); err != nil {
		return err
	}
	return s.Confirm(check)
}
