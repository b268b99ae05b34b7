package ssh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/melbahja/goph"
	xssh "golang.org/x/crypto/ssh"

	"github.com/labctl/labctl/inventory"
)

// Target is a device to reach.
type Target struct {
	Name string // device name, for errors and logs
	Addr string // host:port
	Cred inventory.Credential
}

// errorf prefixes an error with the device name and address.
func (t Target) errorf(format string, args ...any) error {
	return fmt.Errorf("device %s (%s): "+format, append([]any{t.Name, t.Addr}, args...)...)
}

// Config of a Pool.
type Config struct {
	KnownHosts     string        // required: host keys are always verified
	DialTimeout    time.Duration // TCP connect + SSH handshake; default 10s
	CommandTimeout time.Duration // per Exec; 0 = none
	MaxParallel    int           // ForEach bound; default 32
	Retries        int           // dial retries with backoff; default 2, <0 = none
	Logger         *slog.Logger
}

// maxSessions is how many sessions the pool opens at once on one
// connection: OpenSSH's default MaxSessions, beyond which it refuses
// channels.
const maxSessions = 10

// Pool keeps one SSH connection per target, redialled when it breaks.
type Pool struct {
	cfg    Config
	mu     sync.Mutex
	slots  map[string]*slot
	closed bool

	khMu    sync.Mutex // guards the parsed known_hosts (auth.go)
	kh      xssh.HostKeyCallback
	khStamp fileStamp
}

// slot is one target's connection.
type slot struct {
	dialing  chan struct{} // held while dialling: concurrent first uses share one dial
	sessions chan struct{} // bounds concurrent sessions on the connection
	mu       sync.Mutex
	c        *conn // nil when not connected
}

// conn is a pooled connection, with a channel closed when it dies.
type conn struct {
	*goph.Client
	dead chan struct{}
}

// NewPool makes a pool; it dials lazily.
func NewPool(cfg Config) *Pool {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 32
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = 2
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pool{cfg: cfg, slots: map[string]*slot{}}
}

// slotFor returns t's slot. Targets differing in address, name or
// credential get separate connections.
func (p *Pool) slotFor(t Target) (*slot, error) {
	k := fmt.Sprintf("%s|%s|%+v", t.Addr, t.Name, t.Cred) // references only, no secrets
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, t.errorf("ssh pool is closed")
	}
	s, ok := p.slots[k]
	if !ok {
		s = &slot{dialing: make(chan struct{}, 1), sessions: make(chan struct{}, maxSessions)}
		p.slots[k] = s
	}
	return s, nil
}

func (s *slot) get() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// forget drops c if it is still the slot's connection, and closes it.
func (s *slot) forget(c *conn) error {
	s.mu.Lock()
	if s.c == c {
		s.c = nil
	}
	s.mu.Unlock()
	return c.Close()
}

// client returns t's connection, dialling if there is none.
func (p *Pool) client(ctx context.Context, t Target) (*slot, *conn, error) {
	s, err := p.slotFor(t)
	if err != nil {
		return nil, nil, err
	}
	if c := s.get(); c != nil {
		return s, c, nil
	}
	select {
	case s.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, t.errorf("%w", ctx.Err())
	}
	defer func() { <-s.dialing }()
	if c := s.get(); c != nil { // dialled by whoever held the slot before us
		return s, c, nil
	}
	gc, err := p.dialRetry(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	c := &conn{Client: gc, dead: make(chan struct{})}
	p.mu.Lock()
	closed := p.closed
	if !closed {
		s.mu.Lock()
		s.c = c
		s.mu.Unlock()
	}
	p.mu.Unlock()
	if closed {
		c.Close()
		return nil, nil, t.errorf("ssh pool is closed")
	}
	go func() { // a connection that dies is forgotten, so the next use redials
		err := c.Wait()
		close(c.dead)
		_ = s.forget(c)
		p.cfg.Logger.Debug("ssh connection closed", "device", t.Name, "addr", t.Addr, "err", err)
	}()
	return s, c, nil
}

// dialRetry dials with exponential backoff. Host key, authentication and
// credential errors are not retried: trying again cannot fix them.
func (p *Pool) dialRetry(ctx context.Context, t Target) (*goph.Client, error) {
	backoff := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		c, err := p.dial(ctx, t)
		if err == nil {
			return c, nil
		}
		var perm *permanent
		if errors.As(err, &perm) {
			return nil, perm.err
		}
		if attempt >= p.cfg.Retries || ctx.Err() != nil {
			return nil, err
		}
		p.cfg.Logger.Info("ssh dial failed; retrying", "device", t.Name, "addr", t.Addr, "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return nil, t.errorf("%w", ctx.Err())
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// permanent marks a dial error that retrying cannot fix.
type permanent struct{ err error }

func (e *permanent) Error() string { return e.err.Error() }

// dial makes one connection attempt, bounded by ctx and DialTimeout, the
// SSH handshake included: the TCP connection is closed when they end. A
// peer that accepts and then says nothing (a hung sshd, another service
// on the port) would otherwise hold the handshake, its goroutine and its
// connection for as long as it stays up: the timeout of goph and
// x/crypto/ssh covers only the TCP connect.
func (p *Pool) dial(ctx context.Context, t Target) (*goph.Client, error) {
	host, portS, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, &permanent{t.errorf("bad address: %w", err)}
	}
	port, err := strconv.ParseUint(portS, 10, 16)
	if err != nil {
		return nil, &permanent{t.errorf("bad port %q", portS)}
	}
	cfg, closer, err := p.ClientConfig(t)
	if err != nil {
		return nil, &permanent{err}
	}
	defer closer.Close() // the agent is needed only during authentication
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	addr := net.JoinHostPort(host, portS)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, t.errorf("ssh dial: %w", ctx.Err())
		}
		return nil, t.errorf("ssh: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // ends the handshake
	sc, chans, reqs, err := xssh.NewClientConn(conn, addr, cfg)
	if !stop() {
		if err == nil {
			sc.Close()
		}
		return nil, t.errorf("ssh dial: %w", ctx.Err())
	}
	if err != nil {
		conn.Close()
		var he *HostKeyError
		if errors.As(err, &he) {
			return nil, &permanent{he}
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, &permanent{t.errorf("authentication as %q failed: %w", t.Cred.User, err)}
		}
		return nil, t.errorf("ssh: %w", err)
	}
	p.cfg.Logger.Debug("ssh connected", "device", t.Name, "addr", t.Addr, "user", t.Cred.User)
	return &goph.Client{Client: xssh.NewClient(sc, chans, reqs),
		Config: &goph.Config{User: t.Cred.User, Addr: host, Port: uint(port), Timeout: p.cfg.DialTimeout}}, nil
}

// Close closes every connection; the pool cannot be used afterwards.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	slots := p.slots
	p.slots = map[string]*slot{}
	p.mu.Unlock()
	var errs []error
	for _, s := range slots {
		if c := s.get(); c != nil {
			if err := s.forget(c); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
