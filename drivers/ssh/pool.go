package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/melbahja/goph"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/labctl/labctl/inventory"
)

// Target is a device to reach.
type Target struct {
	Name string // device name, for errors and logs
	Addr string // host:port
	Cred inventory.Credential
}

// Config of a Pool.
type Config struct {
	KnownHosts     string        // required: host keys are always verified
	DialTimeout    time.Duration // default 10s
	CommandTimeout time.Duration // 0 = none
	MaxParallel    int           // default 32
	Retries        int           // dial retries, default 2
	Logger         *slog.Logger
}

// Pool keeps one connection per device.
type Pool struct {
	cfg   Config
	mu    sync.Mutex
	conns map[string]*goph.Client
}

// NewPool makes a pool.
func NewPool(cfg Config) *Pool {
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 32
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Pool{cfg: cfg, conns: map[string]*goph.Client{}}
}

// Result is a finished command.
type Result struct {
	Device, Command string
	Stdout, Stderr  []byte
	ExitStatus      int
}

// Err is nil for exit status 0, else an error naming device, command and
// what it answered.
func (r *Result) Err() error {
	if r.ExitStatus == 0 {
		return nil
	}
	msg := strings.TrimSpace(string(r.Stderr))
	if msg == "" {
		msg = strings.TrimSpace(string(r.Stdout))
	}
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	return fmt.Errorf("device %s: command %q: exit %d: %s", r.Device, r.Command, r.ExitStatus, msg)
}

func key(t Target) string { return t.Name + "|" + t.Addr + "|" + t.Cred.User }

func (p *Pool) client(ctx context.Context, t Target) (*goph.Client, error) {
	p.mu.Lock()
	c, ok := p.conns[key(t)]
	p.mu.Unlock()
	if ok {
		return c, nil
	}
	var err error
	for attempt := 0; attempt <= p.cfg.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("device %s (%s): %w", t.Name, t.Addr, ctx.Err())
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		c, err = p.dial(t)
		if err == nil {
			p.mu.Lock()
			if old, ok := p.conns[key(t)]; ok { // lost a race: keep one
				p.mu.Unlock()
				c.Close()
				return old, nil
			}
			p.conns[key(t)] = c
			p.mu.Unlock()
			return c, nil
		}
		var he *hostKeyError
		if errors.As(err, &he) || isAuthError(err) {
			break // retrying will not help
		}
	}
	return nil, err
}

func (p *Pool) dial(t Target) (*goph.Client, error) {
	host, portS, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, fmt.Errorf("device %s: bad address %q: %w", t.Name, t.Addr, err)
	}
	port, _ := strconv.Atoi(portS)
	auth, err := authFor(t)
	if err != nil {
		return nil, err
	}
	cb, err := p.hostKeyCallback(t)
	if err != nil {
		return nil, err
	}
	c, err := goph.NewConn(&goph.Config{User: t.Cred.User, Addr: host, Port: uint(port), Auth: auth,
		Timeout: p.cfg.DialTimeout, Callback: cb})
	if err != nil {
		return nil, fmt.Errorf("device %s (%s): ssh: %w", t.Name, t.Addr, err)
	}
	return c, nil
}

type hostKeyError struct{ msg string }

func (e *hostKeyError) Error() string { return e.msg }

func (p *Pool) hostKeyCallback(t Target) (xssh.HostKeyCallback, error) {
	if p.cfg.KnownHosts == "" {
		return nil, fmt.Errorf("device %s: no known_hosts file configured; labctl always verifies host keys", t.Name)
	}
	kh, err := knownhosts.New(p.cfg.KnownHosts)
	if err != nil {
		return nil, fmt.Errorf("known_hosts %s: %w", p.cfg.KnownHosts, err)
	}
	return func(hostname string, remote net.Addr, k xssh.PublicKey) error {
		err := kh(hostname, remote, k)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			if len(ke.Want) == 0 {
				return &hostKeyError{fmt.Sprintf("host key for %s (%s) not in known_hosts %s (add it after checking its fingerprint %s)",
					t.Name, t.Addr, p.cfg.KnownHosts, xssh.FingerprintSHA256(k))}
			}
			return &hostKeyError{fmt.Sprintf("HOST KEY MISMATCH for %s (%s): it presented %s, known_hosts %s line %d has another key",
				t.Name, t.Addr, xssh.FingerprintSHA256(k), p.cfg.KnownHosts, ke.Want[0].Line)}
		}
		return err
	}, nil
}

func isAuthError(err error) bool { return strings.Contains(fmt.Sprint(err), "unable to authenticate") }

// authFor builds auth methods from a credential reference. Secrets are read
// at dial time and never logged.
func authFor(t Target) (goph.Auth, error) {
	c := t.Cred
	var auth goph.Auth
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("device %s: key_file: %w", t.Name, err)
		}
		s, err := xssh.ParsePrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("device %s: key_file %s: %w", t.Name, c.KeyFile, err)
		}
		auth = append(auth, xssh.PublicKeys(s))
	}
	if c.Agent {
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, fmt.Errorf("device %s: credential wants ssh-agent but SSH_AUTH_SOCK is not set", t.Name)
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, fmt.Errorf("device %s: ssh-agent: %w", t.Name, err)
		}
		auth = append(auth, xssh.PublicKeysCallback(agent.NewClient(conn).Signers))
	}
	if c.PasswordEnv != "" {
		pw := os.Getenv(c.PasswordEnv)
		if pw == "" {
			return nil, fmt.Errorf("device %s: password_env %s is empty", t.Name, c.PasswordEnv)
		}
		auth = append(auth, xssh.Password(pw))
	}
	if c.PasswordFile != "" {
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("device %s: password_file: %w", t.Name, err)
		}
		auth = append(auth, xssh.Password(strings.TrimRight(strings.SplitN(string(b), "\n", 2)[0], "\r")))
	}
	if len(auth) == 0 {
		return nil, fmt.Errorf("device %s: credential has no method (key_file, agent, password_env, password_file)", t.Name)
	}
	return auth, nil
}

// drop forgets a broken connection.
func (p *Pool) drop(t Target, c *goph.Client) {
	p.mu.Lock()
	if p.conns[key(t)] == c {
		delete(p.conns, key(t))
	}
	p.mu.Unlock()
	c.Close()
}

// session opens a session, redialling once if the pooled connection broke.
func (p *Pool) session(ctx context.Context, t Target) (*xssh.Session, error) {
	for i := 0; ; i++ {
		c, err := p.client(ctx, t)
		if err != nil {
			return nil, err
		}
		s, err := c.NewSession()
		if err == nil {
			return s, nil
		}
		p.drop(t, c)
		if i == 1 {
			return nil, fmt.Errorf("device %s (%s): new session: %w", t.Name, t.Addr, err)
		}
	}
}

// Exec runs cmd. A non-zero exit is not an error here (see Result.Err);
// errors are transport failures and cancellation, which kill the remote
// command.
func (p *Pool) Exec(ctx context.Context, t Target, cmd string) (*Result, error) {
	return p.ExecStdin(ctx, t, cmd, nil)
}

// ExecStdin is Exec with standard input.
func (p *Pool) ExecStdin(ctx context.Context, t Target, cmd string, stdin io.Reader) (*Result, error) {
	if p.cfg.CommandTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.CommandTimeout)
		defer cancel()
	}
	s, err := p.session(ctx, t)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, stdin
	if err := s.Start(cmd); err != nil {
		return nil, fmt.Errorf("device %s: command %q: %w", t.Name, cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	res := &Result{Device: t.Name, Command: cmd}
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Signal(xssh.SIGKILL)
		s.Close()
		return nil, fmt.Errorf("device %s: command %q: %w", t.Name, cmd, ctx.Err())
	}
	res.Stdout, res.Stderr = out.Bytes(), errb.Bytes()
	var ee *xssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitStatus = ee.ExitStatus()
	default:
		return nil, fmt.Errorf("device %s: command %q: %w", t.Name, cmd, err)
	}
	p.cfg.Logger.Debug("exec", "device", t.Name, "command", cmd, "exit", res.ExitStatus)
	return res, nil
}

// ForEach runs fn for every target, at most MaxParallel at once, and joins
// the errors (each names its device).
func (p *Pool) ForEach(ctx context.Context, targets []Target, fn func(ctx context.Context, t Target) error) error {
	sem := make(chan struct{}, p.cfg.MaxParallel)
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = fmt.Errorf("device %s: %w", t.Name, ctx.Err())
				return
			}
			defer func() { <-sem }()
			errs[i] = fn(ctx, t)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every connection.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for k, c := range p.conns {
		errs = append(errs, c.Close())
		delete(p.conns, k)
	}
	return errors.Join(errs...)
}
