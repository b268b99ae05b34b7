package sshd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/labctl/labctl/emulator/sshd"
)

// device is a running server plus what a client needs to reach it.
type device struct {
	srv     *sshd.Server
	root    string
	known   string      // known_hosts written with sshd.WriteKnownHosts
	keyPath string      // client private key written with GenerateClientKey
	killed  chan string // commands whose ctx ended while they ran
	started chan string // commands that began blocking
}

// startDevice runs a server whose handler knows: "echo WORDS", "fail"
// (stderr, exit 3), "cat" (stdin to stdout), "env NAME", "block" (waits for
// ctx, then reports on killed and exits 137).
func startDevice(t *testing.T, mod func(*sshd.Config)) *device {
	t.Helper()
	dir := t.TempDir()
	d := &device{root: filepath.Join(dir, "root"), known: filepath.Join(dir, "known_hosts"),
		killed: make(chan string, 4), started: make(chan string, 4)}
	if err := os.Mkdir(d.root, 0o755); err != nil {
		t.Fatal(err)
	}
	keyPath, pub, err := sshd.GenerateClientKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.keyPath = keyPath
	hk, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg := sshd.Config{Name: "h1", HostKey: hk, AuthorizedKeys: []ssh.PublicKey{pub}, Root: d.root,
		Exec: func(ctx context.Context, s *sshd.Session) int {
			name, arg, _ := strings.Cut(s.Command, " ")
			switch name {
			case "echo":
				fmt.Fprintln(s.Stdout, arg)
				return 0
			case "fail":
				fmt.Fprintln(s.Stderr, "it broke")
				return 3
			case "cat":
				if _, err := io.Copy(s.Stdout, s.Stdin); err != nil {
					return 1
				}
				return 0
			case "env":
				fmt.Fprint(s.Stdout, s.Env[arg])
				return 0
			case "block":
				d.started <- s.Command
				<-ctx.Done()
				d.killed <- s.Command
				return 137
			}
			fmt.Fprintf(s.Stderr, "%s: command not found\n", name)
			return 127
		}}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := sshd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	d.srv = srv
	if err := sshd.WriteKnownHosts(d.known, []sshd.KnownHost{{Addr: srv.Addr(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	return d
}

// dial connects with the given auth, verifying the host key against the
// known_hosts file the package wrote.
func (d *device) dial(t *testing.T, user string, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	t.Helper()
	cb, err := knownhosts.New(d.known)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.Dial("tcp", d.srv.Addr(), &ssh.ClientConfig{User: user, Auth: auth, HostKeyCallback: cb, Timeout: 5 * time.Second})
}

// key is the authorised client key, read back from its file.
func (d *device) key(t *testing.T) ssh.AuthMethod {
	t.Helper()
	b, err := os.ReadFile(d.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.PublicKeys(signer)
}

func (d *device) client(t *testing.T) *ssh.Client {
	t.Helper()
	c, err := d.dial(t, "lab", d.key(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (d *device) waitKilled(t *testing.T, cmd string) {
	t.Helper()
	select {
	case got := <-d.killed:
		if got != cmd {
			t.Fatalf("killed %q, want %q", got, cmd)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the handler of %q never saw its context end", cmd)
	}
}

func TestExec(t *testing.T) {
	d := startDevice(t, nil)
	c := d.client(t)
	for _, tc := range []struct {
		cmd, stdin, env string
		stdout, stderr  string
		status          int
	}{
		{cmd: "echo hello world", stdout: "hello world\n"},
		{cmd: "fail", stderr: "it broke\n", status: 3},
		{cmd: "cat", stdin: "line1\nline2\n", stdout: "line1\nline2\n"},
		{cmd: "env LAB_RUN", env: "r42", stdout: "r42"},
		{cmd: "nosuch", stderr: "nosuch: command not found\n", status: 127},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.env != "" {
				if err := s.Setenv("LAB_RUN", tc.env); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb bytes.Buffer
			s.Stdout, s.Stderr, s.Stdin = &out, &errb, strings.NewReader(tc.stdin)
			err = s.Run(tc.cmd)
			status := 0
			var ee *ssh.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitStatus()
			} else if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.stdout || errb.String() != tc.stderr || status != tc.status {
				t.Errorf("got stdout %q stderr %q exit %d; want %q %q %d",
					out.String(), errb.String(), status, tc.stdout, tc.stderr, tc.status)
			}
		})
	}
}

func TestShellRunsLinesThroughExec(t *testing.T) {
	d := startDevice(t, nil)
	s, err := d.client(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, strings.NewReader("echo one\n\n# comment\nfail\n")
	if err := s.RequestPty("xterm", 24, 80, nil); err != nil {
		t.Fatalf("pty-req must be accepted: %v", err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	var ee *ssh.ExitError
	if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 3 {
		t.Fatalf("shell exit = %v, want the last command's status 3", err)
	}
	if out.String() != "one\n" || errb.String() != "it broke\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestHandlerContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*ssh.Client, *ssh.Session) error
	}{
		{"signal KILL", func(_ *ssh.Client, s *ssh.Session) error { return s.Signal(ssh.SIGKILL) }},
		{"channel closed", func(_ *ssh.Client, s *ssh.Session) error { return s.Close() }},
		{"connection dropped", func(c *ssh.Client, _ *ssh.Session) error { return c.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDevice(t, nil)
			c := d.client(t)
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Start("block"); err != nil {
				t.Fatal(err)
			}
			<-d.started
			if err := tc.end(c, s); err != nil {
				t.Fatal(err)
			}
			d.waitKilled(t, "block")
		})
	}
}

func TestSignalReportsExitStatus(t *testing.T) {
	d := startDevice(t, nil)
	s, err := d.client(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start("block"); err != nil {
		t.Fatal(err)
	}
	<-d.started
	if err := s.Signal(ssh.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ee *ssh.ExitError
	if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 137 {
		t.Fatalf("after KILL: %v, want exit status 137 from the handler", err)
	}
}

func TestCloseCancelsHandlersAndWaits(t *testing.T) {
	d := startDevice(t, nil)
	s, err := d.client(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("block"); err != nil {
		t.Fatal(err)
	}
	<-d.started
	if err := d.srv.Close(); err != nil {
		t.Fatal(err)
	}
	select { // Close waited for the handler, so its report is already there
	case <-d.killed:
	default:
		t.Fatal("Close returned before the running handler ended")
	}
	if _, err := d.dial(t, "lab", d.key(t)); err == nil {
		t.Fatal("a closed server still accepts connections")
	}
}

func TestAuthentication(t *testing.T) {
	d := startDevice(t, func(c *sshd.Config) { c.Passwords = map[string]string{"ops": "s3cret"} })
	stranger, err := sshd.GenerateHostKey() // any ed25519 key not authorised
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		user string
		auth ssh.AuthMethod
		ok   bool
	}{
		{"authorised key", "lab", d.key(t), true},
		{"unauthorised key", "lab", ssh.PublicKeys(stranger), false},
		{"right password", "ops", ssh.Password("s3cret"), true},
		{"wrong password", "ops", ssh.Password("guess"), false},
		{"password of another user", "lab", ssh.Password("s3cret"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := d.dial(t, tc.user, tc.auth)
			if c != nil {
				c.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("dial: %v, want success=%v", err, tc.ok)
			}
		})
	}
	if n := d.srv.Connections(); n != 2 {
		t.Errorf("Connections() = %d, want 2 (only the successful logins)", n)
	}
}

func TestKnownHostsRejectsOtherKey(t *testing.T) {
	d := startDevice(t, nil)
	other, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := sshd.WriteKnownHosts(d.known, []sshd.KnownHost{{Addr: d.srv.Addr(), Key: other.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.known)
	if !strings.HasPrefix(string(b), "[127.0.0.1]:") {
		t.Errorf("known_hosts line %q: want [host]:port form for a non-22 port", b)
	}
	var ke *knownhosts.KeyError
	if _, err := d.dial(t, "lab", d.key(t)); !errors.As(err, &ke) || len(ke.Want) == 0 {
		t.Fatalf("dial with a mismatched known_hosts: %v, want a key mismatch", err)
	}
}

func TestKnownHostsPort22Form(t *testing.T) {
	k, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "known_hosts")
	if err := sshd.WriteKnownHosts(p, []sshd.KnownHost{{Addr: "10.0.0.7:22", Key: k.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "10.0.0.7 ssh-ed25519 ") {
		t.Errorf("known_hosts line %q: want a bare host for port 22", b)
	}
	if err := sshd.WriteKnownHosts(p, []sshd.KnownHost{{Addr: "no-port", Key: k.PublicKey()}}); err == nil {
		t.Error("an address without a port was accepted")
	}
}

func TestClientKeyFile(t *testing.T) {
	dir := t.TempDir()
	p, pub, err := sshd.GenerateClientKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key %s: %v %v, want mode 0600", p, fi, err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "-----BEGIN OPENSSH PRIVATE KEY-----") {
		t.Errorf("not an OpenSSH private key file: %.40q", b)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil || !bytes.Equal(signer.PublicKey().Marshal(), pub.Marshal()) {
		t.Fatalf("key file does not hold the returned key: %v", err)
	}
	pb, _ := os.ReadFile(p + ".pub")
	if got, _, _, _, err := ssh.ParseAuthorizedKey(pb); err != nil || !bytes.Equal(got.Marshal(), pub.Marshal()) {
		t.Errorf(".pub file: %v", err)
	}
}

func TestNewRefusesUnusableConfig(t *testing.T) {
	hk, _ := sshd.GenerateHostKey()
	for _, cfg := range []sshd.Config{
		{Name: "nokey", AuthorizedKeys: []ssh.PublicKey{hk.PublicKey()}},
		{Name: "nobody", HostKey: hk},
	} {
		if _, err := sshd.New(cfg); err == nil || !strings.Contains(err.Error(), cfg.Name) {
			t.Errorf("New(%s): %v, want an error naming the device", cfg.Name, err)
		}
	}
}
