package ssh_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// device is a real SSH server on loopback (the emulator's sshd) with a
// handler that knows a few commands, and a pool set up to reach it.
type device struct {
	t       *testing.T
	srv     *sshd.Server
	cfg     sshd.Config
	root    string
	kh      string
	keyPath string
	pool    *sshdrv.Pool
	target  sshdrv.Target

	running, peak atomic.Int32  // concurrent "hold" handlers
	gate          chan struct{} // "hold" waits until this is closed
	killed        chan string   // "block" handlers whose ctx ended
}

// newDevice starts a server whose commands are: "echo WORDS", "fail"
// (stderr "it broke", exit 3), "cat" (stdin to stdout), "block" (until
// its ctx ends), "hold" (counts concurrency, waits for gate).
func newDevice(t *testing.T, poolCfg sshdrv.Config, mod func(*sshd.Config)) *device {
	t.Helper()
	dir := t.TempDir()
	d := &device{t: t, root: filepath.Join(dir, "root"), kh: filepath.Join(dir, "known_hosts"),
		gate: make(chan struct{}), killed: make(chan string, 16)}
	if err := os.Mkdir(d.root, 0o755); err != nil {
		t.Fatal(err)
	}
	keyPath, pub, hk := testKeys(t, dir)
	d.keyPath = keyPath
	d.cfg = sshd.Config{Name: "h1", HostKey: hk, AuthorizedKeys: []xssh.PublicKey{pub}, Root: d.root, Exec: d.exec}
	if mod != nil {
		mod(&d.cfg)
	}
	d.start()
	if err := sshd.WriteKnownHosts(d.kh, []sshd.KnownHost{{Addr: d.srv.Addr(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	poolCfg.KnownHosts = d.kh
	d.pool = sshdrv.NewPool(poolCfg)
	t.Cleanup(func() { d.pool.Close() })
	d.target = sshdrv.Target{Name: "h1", Addr: d.srv.Addr(), Cred: inventory.Credential{User: "lab", KeyFile: keyPath}}
	return d
}

// testKeys writes a client key pair into dir and makes a host key.
func testKeys(t *testing.T, dir string) (keyPath string, pub xssh.PublicKey, hostKey xssh.Signer) {
	t.Helper()
	keyPath, pub, err := sshd.GenerateClientKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	return keyPath, pub, hk
}

// start (re)starts the server on cfg.Addr.
func (d *device) start() {
	d.t.Helper()
	srv, err := sshd.New(d.cfg)
	if err != nil {
		d.t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { srv.Close() })
	d.srv = srv
	d.cfg.Addr = srv.Addr()
}

func (d *device) exec(ctx context.Context, s *sshd.Session) int {
	name, arg, _ := strings.Cut(s.Command, " ")
	switch name {
	case "echo":
		fmt.Fprintln(s.Stdout, arg)
		return 0
	case "fail":
		fmt.Fprintln(s.Stderr, "it broke")
		return 3
	case "cat":
		io.Copy(s.Stdout, s.Stdin)
		return 0
	case "block":
		<-ctx.Done()
		d.killed <- s.Command
		return 137
	case "hold":
		n := d.running.Add(1)
		defer d.running.Add(-1)
		for p := d.peak.Load(); n > p && !d.peak.CompareAndSwap(p, n); p = d.peak.Load() {
		}
		select {
		case <-d.gate:
		case <-ctx.Done():
		}
		return 0
	}
	return 127
}

func TestExec(t *testing.T) {
	d := newDevice(t, sshdrv.Config{}, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		cmd, stdin     string
		stdout, stderr string
		status         int
		err            string
	}{
		{cmd: "echo hello world", stdout: "hello world\n"},
		{cmd: "fail", stderr: "it broke\n", status: 3, err: `device h1: command "fail": exit 3: it broke`},
		{cmd: "cat", stdin: "a\nb\n", stdout: "a\nb\n"},
		{cmd: "nosuch", status: 127, err: `device h1: command "nosuch": exit 127`},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			var r *sshdrv.Result
			var err error
			if tc.stdin != "" {
				r, err = d.pool.ExecStdin(ctx, d.target, tc.cmd, strings.NewReader(tc.stdin))
			} else {
				r, err = d.pool.Exec(ctx, d.target, tc.cmd)
			}
			if err != nil {
				t.Fatalf("a command's exit status is not a transport error: %v", err)
			}
			if string(r.Stdout) != tc.stdout || string(r.Stderr) != tc.stderr || r.ExitStatus != tc.status ||
				r.Device != "h1" || r.Command != tc.cmd {
				t.Errorf("got %+v", r)
			}
			switch e := r.Err(); {
			case tc.err == "" && e != nil:
				t.Errorf("Err() = %v, want nil", e)
			case tc.err != "" && (e == nil || e.Error() != tc.err):
				t.Errorf("Err() = %v, want %q", e, tc.err)
			}
		})
	}
}

func TestConnectionReuseAndRedial(t *testing.T) {
	d := newDevice(t, sshdrv.Config{}, nil)
	ctx := context.Background()
	for i := range 10 {
		if _, err := d.pool.Exec(ctx, d.target, fmt.Sprintf("echo %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.srv.Connections(); n != 1 {
		t.Fatalf("10 commands made %d connections, want 1", n)
	}
	// The device restarts (same address and host key): the pooled
	// connection is dead and the next command must redial.
	d.srv.Close()
	d.start()
	r, err := d.pool.Exec(ctx, d.target, "echo back")
	if err != nil || string(r.Stdout) != "back\n" {
		t.Fatalf("after the device restarted: %v %v", r, err)
	}
	if n := d.srv.Connections(); n != 1 {
		t.Errorf("the restarted device saw %d connections, want 1", n)
	}
}

// lockedBuffer is a log destination several goroutines may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestCancelKillsRemoteCommand: a command that runs out of time or whose
// caller cancels it is killed on the device, the error names both, the
// connection serves on; the kill is a warning when the time ran out and
// a debug line when the caller cancelled (on purpose).
func TestCancelKillsRemoteCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       sshdrv.Config
		ctx       func() (context.Context, context.CancelFunc)
		wantErr   error
		wantLevel string
	}{
		{"command timeout", sshdrv.Config{CommandTimeout: 200 * time.Millisecond},
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			context.DeadlineExceeded, "WARN"},
		{"caller cancels", sshdrv.Config{},
			func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(200*time.Millisecond, cancel)
				return ctx, cancel
			}, context.Canceled, "DEBUG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuffer
			tc.cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			d := newDevice(t, tc.cfg, nil)
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := d.pool.Exec(ctx, d.target, "block")
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), `device h1 (`+d.target.Addr+`): command "block"`) {
				t.Fatalf("Exec = %v, want %v naming device and command", err, tc.wantErr)
			}
			select {
			case <-d.killed: // the server-side handler saw its ctx end
			case <-time.After(5 * time.Second):
				t.Fatal("the remote command was not killed")
			}
			// The connection survives the kill and serves the next command.
			if r, err := d.pool.Exec(context.Background(), d.target, "echo ok"); err != nil || r.ExitStatus != 0 {
				t.Fatalf("after a kill: %v", err)
			}
			if n := d.srv.Connections(); n != 1 {
				t.Errorf("%d connections, want the same one reused", n)
			}
			if want := "level=" + tc.wantLevel + ` msg="command cancelled; remote process killed" device=h1 command=block`; !strings.Contains(logs.String(), want) {
				t.Errorf("log:\n%s\nwant a line with %s", logs.String(), want)
			}
		})
	}
}

func TestTransportErrorsNameDevice(t *testing.T) {
	d := newDevice(t, sshdrv.Config{Retries: -1, DialTimeout: time.Second}, nil)
	ghost := d.target
	ghost.Name, ghost.Addr = "ghost", "127.0.0.1:1"
	_, err := d.pool.Exec(context.Background(), ghost, "echo x")
	if err == nil || !strings.HasPrefix(err.Error(), "device ghost (127.0.0.1:1): ") {
		t.Fatalf("dial error %v, want it to name device and address", err)
	}
	d.pool.Close()
	if _, err := d.pool.Exec(context.Background(), d.target, "echo x"); err == nil {
		t.Fatal("a closed pool still runs commands")
	}
}

func TestDialRetriesWithBackoff(t *testing.T) {
	d := newDevice(t, sshdrv.Config{Retries: 2}, nil)
	addr := d.srv.Addr()
	d.srv.Close() // nothing listens now: every attempt is refused
	start := time.Now()
	_, err := d.pool.Exec(context.Background(), d.target, "echo x")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("got %v, want connection refused", err)
	}
	// Two retries with 250ms then 500ms backoff.
	if el := time.Since(start); el < 700*time.Millisecond {
		t.Errorf("gave up after %v: retries with backoff did not happen", el)
	}
	// A device that comes back within the retries is reached.
	d.cfg.Addr = addr
	back := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		srv, err := sshd.New(d.cfg)
		if err == nil {
			err = srv.Start(context.Background())
			t.Cleanup(func() { srv.Close() })
		}
		back <- err
	}()
	if _, err := d.pool.Exec(context.Background(), d.target, "echo x"); err != nil {
		t.Fatalf("device back during retries: %v", err)
	}
	if err := <-back; err != nil {
		t.Fatal(err)
	}
}
