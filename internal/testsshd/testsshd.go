package testsshd

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Server is a running sshd that lets User in with the private key KeyFile,
// and whose host key KnownHosts holds (as [Host]:Port).
type Server struct {
	Host       string // 127.0.0.1
	Port       int
	User       string
	KeyFile    string // the client's private key (OpenSSH format, 0600)
	KnownHosts string
	Dir        string // config, keys and the server's log
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Binary is the sshd to run: $LABCTL_SSHD, /usr/sbin/sshd, or sshd on
// PATH; "" when there is none.
func Binary() string {
	if p := os.Getenv("LABCTL_SSHD"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err == nil {
		return "/usr/sbin/sshd"
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	return ""
}

// Start starts sshd for the test and stops it when the test ends. It
// skips the test when sshd is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary()
	if bin == "" {
		tb.Skip("sshd not installed (Debian openssh-server; scripts/test.sh installs it): no real SSH host for this test")
	}
	// sshd re-executes itself, so it must be named by an absolute path.
	bin, err := filepath.Abs(bin)
	if err != nil {
		tb.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		tb.Fatalf("testsshd: current user: %v", err)
	}
	if os.Geteuid() == 0 {
		// sshd started by root separates privileges into this directory
		// (the Debian service creates it at boot; a container has none).
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			tb.Fatalf("testsshd: %v", err)
		}
	}
	dir := tb.TempDir()
	s := &Server{Host: "127.0.0.1", User: u.Username, Dir: dir,
		KeyFile: filepath.Join(dir, "id_ed25519"), KnownHosts: filepath.Join(dir, "known_hosts")}
	hostPub := writeKey(tb, filepath.Join(dir, "ssh_host_ed25519_key"))
	clientPub := writeKey(tb, s.KeyFile)
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub), 0o600); err != nil {
		tb.Fatal(err)
	}
	// A port taken between choosing and binding it makes sshd exit: try
	// again with another.
	var lastErr error
	for try := 0; try < 5; try++ {
		s.Port = freePort(tb)
		line := fmt.Sprintf("[%s]:%d %s", s.Host, s.Port, ssh.MarshalAuthorizedKey(hostPub))
		if err := os.WriteFile(s.KnownHosts, []byte(line), 0o600); err != nil {
			tb.Fatal(err)
		}
		if lastErr = s.run(tb, bin); lastErr == nil {
			return s
		}
	}
	tb.Fatalf("testsshd: %v", lastErr)
	return nil
}

// config is the server's sshd_config: loopback only, this user only, keys
// only. StrictModes is off because the authorized_keys file is in the
// test's temporary directory, under a world-writable /tmp; UsePAM is off
// because a container has no PAM session to open.
func (s *Server) config() string {
	d := s.Dir
	return strings.Join([]string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress " + s.Host,
		"HostKey " + filepath.Join(d, "ssh_host_ed25519_key"),
		"PidFile " + filepath.Join(d, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(d, "authorized_keys"),
		"AllowUsers " + s.User,
		"StrictModes no",
		"UsePAM no",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"MaxStartups 64",
		"MaxSessions 64",
		"Subsystem sftp internal-sftp",
		"LogLevel VERBOSE",
		"",
	}, "\n")
}

// run starts sshd with the current port and waits until it accepts
// connections; an error says why it did not (its log included).
func (s *Server) run(tb testing.TB, bin string) error {
	tb.Helper()
	cfg := filepath.Join(s.Dir, "sshd_config")
	if err := os.WriteFile(cfg, []byte(s.config()), 0o600); err != nil {
		return err
	}
	if out, err := exec.Command(bin, "-t", "-f", cfg).CombinedOutput(); err != nil {
		tb.Fatalf("testsshd: %s -t -f %s: %v\n%s", bin, cfg, err, out)
	}
	logPath := filepath.Join(s.Dir, "sshd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	// -D: stay in the foreground (the test owns the process); -e: log to
	// stderr, here the log file.
	cmd := exec.Command(bin, "-D", "-e", "-f", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("sshd exited (%v) on port %d:\n%s", err, s.Port, bytes.TrimSpace(b))
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
			c.Close()
			tb.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
				if tb.Failed() {
					b, _ := os.ReadFile(logPath)
					tb.Logf("sshd log (%s):\n%s", logPath, b)
				}
			})
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshd on port %d did not accept connections within 10s", s.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeKey writes a new ed25519 private key in OpenSSH format (what sshd
// and ssh read) and returns its public key.
func writeKey(tb testing.TB, path string) ssh.PublicKey {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "labctl test")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// freePort is a loopback TCP port free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
