package ssh_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

type fixture struct {
	srv      *sshd.Server
	pool     *sshdrv.Pool
	target   sshdrv.Target
	root     string
	kh       string
	running  atomic.Int32
	peak     atomic.Int32
	killed   chan string
	clientPk xssh.PublicKey
}

// newFixture starts a real SSH server on loopback whose commands are:
// "echo X" (stdout), "fail" (stderr, exit 3), "sleep" (until killed),
// "hold" (50ms, counting concurrency).
func newFixture(t *testing.T, mod func(*sshd.Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{root: filepath.Join(dir, "root"), kh: filepath.Join(dir, "known_hosts"), killed: make(chan string, 10)}
	os.MkdirAll(f.root, 0o755)
	keyPath, pub, err := sshd.GenerateClientKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.clientPk = pub
	hk, _ := sshd.GenerateHostKey()
	cfg := sshd.Config{Name: "h1", HostKey: hk, AuthorizedKeys: []xssh.PublicKey{pub}, Root: f.root,
		Exec: func(ctx context.Context, s *sshd.Session) int {
			switch {
			case strings.HasPrefix(s.Command, "echo "):
				s.Stdout.Write([]byte(strings.TrimPrefix(s.Command, "echo ") + "\n"))
				return 0
			case s.Command == "fail":
				s.Stderr.Write([]byte("it broke\n"))
				return 3
			case s.Command == "sleep":
				<-ctx.Done()
				f.killed <- s.Command
				return 137
			case s.Command == "hold":
				n := f.running.Add(1)
				for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
				}
				time.Sleep(50 * time.Millisecond)
				f.running.Add(-1)
				return 0
			}
			return 127
		}}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := sshd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	f.srv = srv
	if err := sshd.WriteKnownHosts(f.kh, []sshd.KnownHost{{Addr: srv.Addr(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	f.pool = sshdrv.NewPool(sshdrv.Config{KnownHosts: f.kh, MaxParallel: 3})
	t.Cleanup(func() { f.pool.Close() })
	f.target = sshdrv.Target{Name: "h1", Addr: srv.Addr(), Cred: inventory.Credential{User: "lab", KeyFile: keyPath}}
	return f
}

func TestExecStdoutStderrExit(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	r, err := f.pool.Exec(ctx, f.target, "echo hello world")
	if err != nil || string(r.Stdout) != "hello world\n" || r.ExitStatus != 0 || r.Err() != nil {
		t.Fatalf("echo: %+v %v", r, err)
	}
	r, err = f.pool.Exec(ctx, f.target, "fail")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitStatus != 3 || string(r.Stderr) != "it broke\n" {
		t.Fatalf("fail: %+v", r)
	}
	if e := r.Err(); e == nil || !strings.Contains(e.Error(), `device h1: command "fail": exit 3: it broke`) {
		t.Errorf("Err() = %v", e)
	}
	for i := 0; i < 10; i++ {
		f.pool.Exec(ctx, f.target, "echo x")
	}
	if n := f.srv.Connections(); n != 1 {
		t.Errorf("12 commands used %d connections, want 1 (reuse)", n)
	}
}

func TestHostKeyVerification(t *testing.T) {
	f := newFixture(t, nil)
	os.WriteFile(f.kh, nil, 0o644)
	_, err := sshdrv.NewPool(sshdrv.Config{KnownHosts: f.kh}).Exec(context.Background(), f.target, "echo x")
	if err == nil || !strings.Contains(err.Error(), "not in known_hosts") {
		t.Fatalf("unknown host accepted: %v", err)
	}
	other, _ := sshd.GenerateHostKey()
	sshd.WriteKnownHosts(f.kh, []sshd.KnownHost{{Addr: f.srv.Addr(), Key: other.PublicKey()}})
	_, err = sshdrv.NewPool(sshdrv.Config{KnownHosts: f.kh}).Exec(context.Background(), f.target, "echo x")
	if err == nil || !strings.Contains(err.Error(), "HOST KEY MISMATCH") {
		t.Fatalf("mismatched host key accepted: %v", err)
	}
	if _, err := sshdrv.NewPool(sshdrv.Config{}).Exec(context.Background(), f.target, "echo x"); err == nil {
		t.Fatal("a pool without known_hosts must refuse to connect")
	}
}

func TestAgentAndPasswordAuth(t *testing.T) {
	var agentKeyPub xssh.PublicKey
	keyring := agent.NewKeyring()
	f := newFixture(t, func(c *sshd.Config) {
		dir := t.TempDir()
		p, pub, _ := sshd.GenerateClientKey(dir)
		b, _ := os.ReadFile(p)
		raw, _ := xssh.ParseRawPrivateKey(b)
		keyring.Add(agent.AddedKey{PrivateKey: raw})
		agentKeyPub = pub
		c.AuthorizedKeys = append(c.AuthorizedKeys, pub)
		c.Passwords = map[string]string{"ops": "s3cret"}
	})
	_ = agentKeyPub
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go agent.ServeAgent(keyring, c)
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	ag := f.target
	ag.Cred = inventory.Credential{User: "lab", Agent: true}
	if r, err := f.pool.Exec(context.Background(), ag, "echo via agent"); err != nil || r.ExitStatus != 0 {
		t.Fatalf("agent auth: %v", err)
	}
	t.Setenv("LAB_PW", "s3cret")
	pw := sshdrv.Target{Name: "h1-pw", Addr: f.target.Addr, Cred: inventory.Credential{User: "ops", PasswordEnv: "LAB_PW"}}
	if _, err := f.pool.Exec(context.Background(), pw, "echo via password"); err != nil {
		t.Fatalf("password auth: %v", err)
	}
	t.Setenv("LAB_PW", "wrong")
	bad := pw
	bad.Name = "h1-bad"
	_, err = f.pool.Exec(context.Background(), bad, "echo x")
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad password: %v (and the password must never appear)", err)
	}
}

func TestSFTPRoundTripAndChroot(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	local := filepath.Join(t.TempDir(), "bin")
	os.WriteFile(local, []byte("payload"), 0o755)
	if err := f.pool.Upload(ctx, f.target, local, "/tmp/labctl/bin/labctl", 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.root, "tmp/labctl/bin/labctl"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("uploaded file on the device: %v %v", fi, err)
	}
	b, err := f.pool.ReadFile(ctx, f.target, "/tmp/labctl/bin/labctl")
	if err != nil || string(b) != "payload" {
		t.Fatalf("read back %q %v", b, err)
	}
	if err := f.pool.WriteFile(ctx, f.target, "../../../escape.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "escape.txt")); err != nil {
		t.Errorf("a ../ path must stay inside the device root: %v", err)
	}
	os.Symlink("/etc", filepath.Join(f.root, "etc-link"))
	if _, err := f.pool.ReadFile(ctx, f.target, "/etc-link/hostname"); err == nil {
		t.Error("a symlink out of the device root was followed")
	}
}

func TestTimeoutKillsRemoteCommand(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := f.pool.Exec(ctx, f.target, "sleep")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "device h1") {
		t.Fatalf("got %v", err)
	}
	select {
	case <-f.killed:
	case <-time.After(5 * time.Second):
		t.Fatal("the remote command was not killed")
	}
}

func TestForEachBoundsParallelism(t *testing.T) {
	f := newFixture(t, nil)
	var ts []sshdrv.Target
	for i := 0; i < 12; i++ {
		ts = append(ts, f.target)
	}
	var mu sync.Mutex
	err := f.pool.ForEach(context.Background(), ts, func(ctx context.Context, t sshdrv.Target) error {
		_, err := f.pool.Exec(ctx, t, "hold")
		mu.Lock()
		defer mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want at most MaxParallel=3 (and some parallelism)", p)
	}
	err = f.pool.ForEach(context.Background(), []sshdrv.Target{f.target, {Name: "ghost", Addr: "127.0.0.1:1", Cred: f.target.Cred}},
		func(ctx context.Context, t sshdrv.Target) error { _, err := f.pool.Exec(ctx, t, "echo x"); return err })
	if err == nil || !strings.Contains(err.Error(), "device ghost") {
		t.Errorf("ForEach must name the failing device: %v", err)
	}
}
