package sshd

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// Session is one exec request (or one line of a "shell" session).
type Session struct {
	Command string
	Env     map[string]string
	User    string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
}

// ExecHandler runs a command and returns its exit status. ctx is cancelled
// when the client closes the channel, drops the connection, sends a signal
// (e.g. KILL) or the server closes: the handler must then return promptly,
// as a killed process would.
type ExecHandler func(ctx context.Context, s *Session) (exitStatus int)

// SubsystemHandler serves a subsystem (e.g. "netconf") over the channel.
// ctx is cancelled as for ExecHandler.
type SubsystemHandler func(ctx context.Context, rw io.ReadWriter) error

// Config of one device's server.
type Config struct {
	Name           string // device name, for logs and errors
	Addr           string // default 127.0.0.1:0
	HostKey        ssh.Signer
	AuthorizedKeys []ssh.PublicKey
	// Passwords enables password authentication (user -> password); meant
	// for tests of a client's password support. Empty means keys only.
	Passwords map[string]string
	// Root is the device's filesystem: "sftp" is chrooted to it. Empty
	// disables the built-in sftp subsystem.
	Root string
	// Mounts serve client paths (absolute, e.g. "/.labctl/agent") from
	// other directories than Root's: a directory several devices share,
	// as hosts with an NFS home directory do.
	Mounts map[string]string
	// Touch, if set, is called with the path of each SFTP request (and a
	// rename's target), relative to Root ("." for Root itself), before it
	// is served: a device that writes part of its tree only when first
	// used (an emulated host's /sys) writes it there.
	Touch      func(name string)
	Exec       ExecHandler
	Subsystems map[string]SubsystemHandler // "sftp" here overrides the built-in one
	// WrapListener, if set, wraps the listener Start opens: the emulated
	// lab's endpoint faults drop or delay connections there.
	WrapListener func(net.Listener) net.Listener
	Logger       *slog.Logger
}

// Server is one device's SSH server.
type Server struct {
	cfg  Config
	ssh  *ssh.ServerConfig
	wg   sync.WaitGroup
	once sync.Once
	stop chan struct{}

	mu     sync.Mutex
	lis    net.Listener
	conns  map[net.Conn]struct{}
	closed bool

	logins atomic.Int64 // counted in the auth callbacks, before the client hears of success
	// execs and subsystems count the sessions that ran a command or a
	// subsystem (SFTP, NETCONF): what a run costs a device (Use).
	execs, subsystems atomic.Int64
}

// Use is what a device's SSH server has served so far.
type Use struct {
	Connections int // authenticated (each a handshake and key exchange)
	Execs       int // sessions that ran a command
	Subsystems  int // sessions that ran a subsystem (an SFTP transfer, a NETCONF session)
}

// Name is the device the server belongs to.
func (s *Server) Name() string { return s.cfg.Name }

// Use says what the server has served so far.
func (s *Server) Use() Use {
	return Use{Connections: int(s.logins.Load()), Execs: int(s.execs.Load()), Subsystems: int(s.subsystems.Load())}
}

// New checks cfg and prepares a server; Start makes it listen.
func New(cfg Config) (*Server, error) {
	if cfg.HostKey == nil {
		return nil, fmt.Errorf("sshd %s: no host key", cfg.Name)
	}
	if len(cfg.AuthorizedKeys) == 0 && len(cfg.Passwords) == 0 {
		return nil, fmt.Errorf("sshd %s: no authorized keys or passwords: nobody could log in", cfg.Name)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = cfg.Logger.With("device", cfg.Name)
	s := &Server{cfg: cfg, conns: map[net.Conn]struct{}{}, stop: make(chan struct{})}
	sc := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range cfg.AuthorizedKeys {
				if subtle.ConstantTimeCompare(k.Marshal(), key.Marshal()) == 1 {
					s.logins.Add(1)
					return nil, nil
				}
			}
			return nil, errors.New("key not authorized")
		},
	}
	if len(cfg.Passwords) > 0 {
		sc.PasswordCallback = func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if want, ok := cfg.Passwords[c.User()]; ok && subtle.ConstantTimeCompare([]byte(want), pw) == 1 {
				s.logins.Add(1)
				return nil, nil
			}
			return nil, errors.New("wrong password")
		}
	}
	sc.AddHostKey(cfg.HostKey)
	s.ssh = sc
	return s, nil
}

// Start listens and returns once listening; the server then runs until
// Close is called or ctx is done.
func (s *Server) Start(ctx context.Context) error {
	lis, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("sshd %s: %w", s.cfg.Name, err)
	}
	if s.cfg.WrapListener != nil {
		lis = s.cfg.WrapListener(lis)
	}
	s.mu.Lock()
	if s.lis != nil || s.closed {
		s.mu.Unlock()
		lis.Close()
		return fmt.Errorf("sshd %s: already started or closed", s.cfg.Name)
	}
	s.lis = lis
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			if !s.track(c) {
				c.Close()
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.untrack(c)
				s.serveConn(ctx, c)
			}()
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.stop:
		}
	}()
	s.cfg.Logger.Debug("sshd listening", "addr", lis.Addr().String())
	return nil
}

// track registers a connection so Close can drop it; false once closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// Addr is the listening address ("" before Start).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// Connections counts the SSH connections that completed authentication so
// far: tests use it to check that a client reuses its connection.
func (s *Server) Connections() int { return int(s.logins.Load()) }

// Close stops listening, drops every connection (which cancels every
// running handler) and waits for the handlers to return.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		s.mu.Lock()
		s.closed = true
		if s.lis != nil {
			err = s.lis.Close()
		}
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(c, s.ssh)
	if err != nil {
		s.cfg.Logger.Debug("ssh handshake failed", "remote", c.RemoteAddr().String(), "err", err)
		return
	}
	defer sc.Close()
	s.cfg.Logger.Debug("ssh login", "user", sc.User(), "remote", c.RemoteAddr().String())
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	for nc := range chans { // ends when the connection drops
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels are served")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.session(ctx, sc.User(), ch, creqs)
		}()
	}
	wg.Wait()
}
