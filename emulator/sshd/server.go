package sshd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Session is one exec request.
type Session struct {
	Command string
	Env     map[string]string
	User    string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
}

// ExecHandler runs a command and returns its exit status. ctx is cancelled
// when the client closes the channel, drops the connection or sends a signal.
type ExecHandler func(ctx context.Context, s *Session) int

// SubsystemHandler serves a subsystem over the channel.
type SubsystemHandler func(ctx context.Context, rw io.ReadWriter) error

// Config of one device's server.
type Config struct {
	Name           string
	Addr           string // default 127.0.0.1:0
	HostKey        ssh.Signer
	AuthorizedKeys []ssh.PublicKey
	Passwords      map[string]string // user -> password (tests of password auth)
	Root           string            // filesystem root for SFTP
	Exec           ExecHandler
	Subsystems     map[string]SubsystemHandler
	Logger         *slog.Logger
}

// Server is a running SSH server.
type Server struct {
	cfg   Config
	ssh   *ssh.ServerConfig
	lis   net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
	total atomic.Int64
}

// New checks cfg and prepares a server.
func New(cfg Config) (*Server, error) {
	if cfg.HostKey == nil {
		return nil, fmt.Errorf("sshd %s: no host key", cfg.Name)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, conns: map[net.Conn]bool{}}
	sc := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range cfg.AuthorizedKeys {
				if string(k.Marshal()) == string(key.Marshal()) {
					return nil, nil
				}
			}
			return nil, errors.New("key not authorized")
		},
	}
	if len(cfg.Passwords) > 0 {
		sc.PasswordCallback = func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if want, ok := cfg.Passwords[c.User()]; ok && want == string(pw) {
				return nil, nil
			}
			return nil, errors.New("bad password")
		}
	}
	sc.AddHostKey(cfg.HostKey)
	s.ssh = sc
	return s, nil
}

// Start listens and serves until ctx is done or Close is called.
func (s *Server) Start(ctx context.Context) error {
	lis, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("sshd %s: %w", s.cfg.Name, err)
	}
	s.lis = lis
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.total.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveConn(ctx, c)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
		}
	}()
	go func() { <-ctx.Done(); s.Close() }()
	return nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Connections counts the connections accepted so far.
func (s *Server) Connections() int { return int(s.total.Load()) }

// Close stops listening, drops every connection and waits for handlers.
func (s *Server) Close() error {
	if s.lis == nil {
		return nil
	}
	err := s.lis.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	sc, chans, reqs, err := ssh.NewServerConn(c, s.ssh)
	if err != nil {
		s.cfg.Logger.Debug("ssh handshake failed", "device", s.cfg.Name, "err", err)
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.session(connCtx, sc.User(), ch, creqs)
		}()
	}
	cancel()
	wg.Wait()
}

func (s *Server) session(ctx context.Context, user string, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := map[string]string{}
	started := false
	done := make(chan int, 1)
	for {
		select {
		case status := <-done:
			payload := make([]byte, 4)
			binary.BigEndian.PutUint32(payload, uint32(status))
			_, _ = ch.SendRequest("exit-status", false, payload)
			return
		case req, ok := <-reqs:
			if !ok {
				cancel() // the client went away: kill what runs
				if started {
					<-done
				}
				return
			}
			switch req.Type {
			case "env":
				var kv struct{ K, V string }
				if ssh.Unmarshal(req.Payload, &kv) == nil {
					env[kv.K] = kv.V
				}
				_ = req.Reply(true, nil)
			case "pty-req", "window-change":
				_ = req.Reply(true, nil)
			case "signal":
				cancel()
				_ = req.Reply(true, nil)
			case "exec":
				var p struct{ Cmd string }
				if started || ssh.Unmarshal(req.Payload, &p) != nil || s.cfg.Exec == nil {
					_ = req.Reply(false, nil)
					continue
				}
				started = true
				_ = req.Reply(true, nil)
				sess := &Session{Command: p.Cmd, Env: env, User: user, Stdin: ch, Stdout: ch, Stderr: ch.Stderr()}
				go func() { done <- s.cfg.Exec(ctx, sess) }()
			case "subsystem":
				var p struct{ Name string }
				if started || ssh.Unmarshal(req.Payload, &p) != nil {
					_ = req.Reply(false, nil)
					continue
				}
				h := s.subsystem(p.Name)
				if h == nil {
					_ = req.Reply(false, nil)
					continue
				}
				started = true
				_ = req.Reply(true, nil)
				go func() {
					if err := h(ctx, ch); err != nil && !errors.Is(err, io.EOF) {
						s.cfg.Logger.Debug("subsystem ended", "device", s.cfg.Name, "subsystem", p.Name, "err", err)
					}
					done <- 0
				}()
			default: // "shell" and others: not offered
				_ = req.Reply(false, nil)
			}
		}
	}
}

func (s *Server) subsystem(name string) SubsystemHandler {
	if h, ok := s.cfg.Subsystems[name]; ok {
		return h
	}
	if name == "sftp" && s.cfg.Root != "" {
		return func(ctx context.Context, rw io.ReadWriter) error {
			rwc, ok := rw.(io.ReadWriteCloser)
			if !ok {
				return errors.New("sftp needs a closable channel")
			}
			root := &rootFS{root: s.cfg.Root}
			srv := sftp.NewRequestServer(rwc, sftp.Handlers{FileGet: root, FilePut: root, FileCmd: root, FileList: root})
			go func() { <-ctx.Done(); srv.Close() }()
			return srv.Serve()
		}
	}
	return nil
}
