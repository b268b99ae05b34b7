package ssh_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// silentServer is an SSH server on loopback that authenticates the client
// and then never answers its channel opens: a device whose SSH daemon
// hangs, or, for the client, a connection that died as it asked for a
// channel (x/crypto/ssh waits for that answer for ever, golang/go#26643).
func silentServer(t *testing.T) (*sshdrv.Pool, sshdrv.Target) {
	t.Helper()
	dir := t.TempDir()
	keyPath, pub, hk := testKeys(t, dir)
	cfg := &xssh.ServerConfig{PublicKeyCallback: func(_ xssh.ConnMetadata, k xssh.PublicKey) (*xssh.Permissions, error) {
		if string(k.Marshal()) != string(pub.Marshal()) {
			return nil, errors.New("unknown key")
		}
		return nil, nil
	}}
	cfg.AddHostKey(hk)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				_, chans, reqs, err := xssh.NewServerConn(c, cfg)
				if err != nil {
					return
				}
				go xssh.DiscardRequests(reqs)
				for range chans { // held, never accepted nor rejected
				}
			}()
		}
	}()
	kh := filepath.Join(dir, "known_hosts")
	if err := sshd.WriteKnownHosts(kh, []sshd.KnownHost{{Addr: ln.Addr().String(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: kh})
	t.Cleanup(func() { pool.Close() })
	return pool, sshdrv.Target{Name: "h1", Addr: ln.Addr().String(), Cred: inventory.Credential{User: "lab", KeyFile: keyPath}}
}

// within runs call and returns its error, failing the test when it has
// not returned 10 s later: what these tests check is that it returns.
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s has not returned after 10 s", what)
		return nil
	}
}

// TestUnansweredSessionOpenEndsWithContext: neither a command nor a file
// transfer waits past its context for a session the server never opens.
func TestUnansweredSessionOpenEndsWithContext(t *testing.T) {
	t.Parallel()
	pool, target := silentServer(t)
	for name, call := range map[string]func(ctx context.Context) error{
		"exec": func(ctx context.Context) error { _, err := pool.Exec(ctx, target, "true"); return err },
		"sftp": func(ctx context.Context) error { return pool.WriteFile(ctx, target, "/tmp/x", []byte("x"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := within(t, "the call, its context ended,", func() error { return call(ctx) }); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's deadline", err)
			}
		})
	}
}

// TestHungSFTPServerEndsWithContext: an SFTP server that takes requests
// and answers none holds a transfer no longer than its context, whether it
// hangs before the version exchange or in the middle of a transfer.
func TestHungSFTPServerEndsWithContext(t *testing.T) {
	t.Parallel()
	for name, answer := range map[string]int{"before the version": 0, "during the transfer": 1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newDevice(t, sshdrv.Config{}, func(c *sshd.Config) {
				c.Subsystems = map[string]sshd.SubsystemHandler{"sftp": func(ctx context.Context, rw io.ReadWriter) error {
					if answer > 0 { // the version, then silence
						var hdr [9]byte
						if _, err := io.ReadFull(rw, hdr[:]); err != nil {
							return err
						}
						if _, err := rw.Write([]byte{0, 0, 0, 5, 2, 0, 0, 0, 3}); err != nil {
							return err
						}
					}
					_, _ = io.Copy(io.Discard, rw)
					<-ctx.Done() // not even the client's end of input ends it
					return ctx.Err()
				}}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := within(t, "the transfer, its context ended,", func() error { return d.pool.WriteFile(ctx, d.target, "/x", []byte("x"), 0o644) })
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's deadline", err)
			}
		})
	}
}

// TestSFTPServerThatLingersAfterEOF: a server that serves every request
// but does not end the subsystem at the client's end of input (the
// client's Close waits for that) does not hold a finished transfer.
func TestSFTPServerThatLingersAfterEOF(t *testing.T) {
	t.Parallel()
	d := newDevice(t, sshdrv.Config{}, func(c *sshd.Config) {
		root := c.Root
		c.Subsystems = map[string]sshd.SubsystemHandler{"sftp": func(ctx context.Context, rw io.ReadWriter) error {
			srv, err := sftp.NewServer(struct {
				io.ReadWriter
				io.Closer
			}{rw, io.NopCloser(nil)}, sftp.WithServerWorkingDirectory(root))
			if err != nil {
				return err
			}
			_ = srv.Serve()
			<-ctx.Done() // lingers until the session ends
			return ctx.Err()
		}}
	})
	if err := within(t, "the transfer", func() error {
		return d.pool.WriteFile(context.Background(), d.target, d.root+"/x", []byte("x"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.root, "x")); err != nil || string(b) != "x" {
		t.Errorf("the file holds %q (%v), want x", b, err)
	}
}

// TestDialLeavesNothingWithASilentPeer: a peer that accepts the TCP
// connection and never speaks SSH (a hung sshd, another service on the
// port) fails the dial after DialTimeout, and labctl's end of the
// connection is closed then, not held for as long as the peer stays up.
func TestDialLeavesNothingWithASilentPeer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(io.Discard, c) // reads the client's version line, answers nothing
		close(closed)
	}()
	dir := t.TempDir()
	keyPath, _, hk := testKeys(t, dir)
	kh := filepath.Join(dir, "known_hosts")
	if err := sshd.WriteKnownHosts(kh, []sshd.KnownHost{{Addr: ln.Addr().String(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: kh, DialTimeout: 300 * time.Millisecond, Retries: -1})
	defer pool.Close()
	target := sshdrv.Target{Name: "h1", Addr: ln.Addr().String(), Cred: inventory.Credential{User: "lab", KeyFile: keyPath}}
	start := time.Now()
	if _, err := pool.Exec(context.Background(), target, "true"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the dial's deadline", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatalf("the connection to the silent peer is still open %v after the dial began", time.Since(start).Round(time.Millisecond))
	}
}
