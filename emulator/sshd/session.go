package sshd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"strings"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// session serves one session channel: it gathers env requests, starts one
// exec, shell or subsystem, and reports its exit status. Whatever runs gets
// a ctx that ends when the client closes the channel, the connection drops
// or a "signal" request arrives: that is how a remote process is killed.
func (s *Server) session(ctx context.Context, user string, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := map[string]string{}
	var done chan int // nil until something runs
	start := func(run func() int) {
		done = make(chan int, 1)
		go func() { done <- s.guard(run) }()
	}
	for {
		select {
		case status := <-done:
			_ = ch.CloseWrite()
			payload := binary.BigEndian.AppendUint32(nil, uint32(status))
			_, _ = ch.SendRequest("exit-status", false, payload)
			return
		case req, ok := <-reqs:
			if !ok { // channel closed or connection gone: kill what runs
				cancel()
				if done != nil {
					<-done
				}
				return
			}
			_ = req.Reply(s.request(ctx, cancel, req, user, ch, env, done != nil, start), nil)
		}
	}
}

// request handles one channel request and says whether it is accepted.
func (s *Server) request(ctx context.Context, kill context.CancelFunc, req *ssh.Request, user string,
	ch ssh.Channel, env map[string]string, running bool, start func(func() int)) bool {
	switch req.Type {
	case "pty-req", "window-change":
		return true // accepted and ignored: output is never a terminal's
	case "signal":
		kill()
		return true
	case "env":
		var kv struct{ Name, Value string }
		if running || ssh.Unmarshal(req.Payload, &kv) != nil {
			return false
		}
		env[kv.Name] = kv.Value
		return true
	}
	if running {
		return false // one exec/shell/subsystem per session, as in OpenSSH
	}
	base := Session{Env: maps.Clone(env), User: user, Stdin: ch, Stdout: ch, Stderr: ch.Stderr()}
	switch req.Type {
	case "exec":
		var p struct{ Command string }
		if s.cfg.Exec == nil || ssh.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		sess := base
		sess.Command = p.Command
		s.cfg.Logger.Debug("exec", "user", user, "command", p.Command)
		s.execs.Add(1)
		start(func() int { return s.cfg.Exec(ctx, &sess) })
		return true
	case "shell":
		if s.cfg.Exec == nil {
			return false
		}
		start(func() int { return s.shell(ctx, base) })
		return true
	case "subsystem":
		var p struct{ Name string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		h := s.subsystem(p.Name)
		if h == nil {
			return false
		}
		s.subsystems.Add(1)
		start(func() int {
			if err := h(ctx, ch); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
				s.cfg.Logger.Debug("subsystem ended", "subsystem", p.Name, "err", err)
				return 1
			}
			return 0
		})
		return true
	}
	return false // x11-req, auth-agent-req@openssh.com, ...
}

// shell is deliberately not interactive (no prompt, no line editing): it
// reads newline-separated commands from stdin and runs each through Exec,
// until EOF, "exit" or a kill; its status is the last command's. That is
// enough for tools that pipe a script into "ssh host" without a command.
func (s *Server) shell(ctx context.Context, base Session) int {
	lines := make(chan string)
	go func() { // ends when the channel closes, after the session returns
		defer close(lines)
		in := bufio.NewScanner(base.Stdin)
		for in.Scan() {
			select {
			case lines <- in.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	status := 0
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done(): // killed while waiting for input
			return status
		case line, ok = <-lines:
		}
		line = strings.TrimSpace(line)
		switch {
		case !ok || line == "exit":
			return status
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		}
		sess := base
		sess.Command, sess.Stdin = line, strings.NewReader("")
		status = s.cfg.Exec(ctx, &sess)
	}
}

// guard turns a panicking handler into exit status 255 rather than taking
// down every emulated device in the process.
func (s *Server) guard(run func() int) (status int) {
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Logger.Error("handler panicked", "panic", r)
			status = 255
		}
	}()
	return run()
}

func (s *Server) subsystem(name string) SubsystemHandler {
	if h, ok := s.cfg.Subsystems[name]; ok {
		return h
	}
	if name != "sftp" || s.cfg.Root == "" {
		return nil
	}
	return func(ctx context.Context, rw io.ReadWriter) error {
		rwc, ok := rw.(io.ReadWriteCloser)
		if !ok {
			return errors.New("sftp needs a closable channel")
		}
		root, err := openRoot(s.cfg.Root, s.cfg.Mounts, s.cfg.Touch)
		if err != nil {
			return err
		}
		defer root.Close()
		srv := sftp.NewRequestServer(rwc, sftp.Handlers{FileGet: root, FilePut: root, FileCmd: root, FileList: root})
		stop := context.AfterFunc(ctx, func() { srv.Close() })
		defer stop()
		return srv.Serve()
	}
}
