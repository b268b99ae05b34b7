package ssh_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

func TestHostKeyVerification(t *testing.T) {
	d := newDevice(t, sshdrv.Config{}, nil)
	other, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		known    []sshd.KnownHost
		mismatch bool
		want     string
	}{
		{"unknown host", nil, false,
			"host key for h1 (" + d.target.Addr + ") not in known_hosts " + d.kh},
		{"other host's entry only", []sshd.KnownHost{{Addr: "127.0.0.1:9", Key: d.cfg.HostKey.PublicKey()}}, false,
			"not in known_hosts"},
		{"mismatched key", []sshd.KnownHost{{Addr: d.target.Addr, Key: other.PublicKey()}}, true,
			"HOST KEY MISMATCH for h1 (" + d.target.Addr + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := sshd.WriteKnownHosts(d.kh, tc.known); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := sshdrv.NewPool(sshdrv.Config{KnownHosts: d.kh}).Exec(context.Background(), d.target, "echo x")
			var he *sshdrv.HostKeyError
			if !errors.As(err, &he) || he.Mismatch != tc.mismatch || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a HostKeyError containing %q", err, tc.want)
			}
			if time.Since(start) > 200*time.Millisecond {
				t.Errorf("a host key error was retried (took %v)", time.Since(start))
			}
		})
	}
	if d.srv.Connections() != 0 {
		t.Error("a connection with an unverified host key got as far as logging in")
	}
	if _, err := sshdrv.NewPool(sshdrv.Config{}).Exec(context.Background(), d.target, "echo x"); err == nil ||
		!strings.Contains(err.Error(), "no known_hosts") {
		t.Fatalf("a pool without known_hosts must refuse to connect: %v", err)
	}
}

// startAgent serves keyring as an ssh-agent on a unix socket and points
// SSH_AUTH_SOCK at it.
func startAgent(t *testing.T, keyring agent.Agent) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}

func TestCredentials(t *testing.T) {
	const secret = "s3cret-Pa55"
	keyring := agent.NewKeyring()
	d := newDevice(t, sshdrv.Config{Retries: -1}, func(c *sshd.Config) {
		p, pub, err := sshd.GenerateClientKey(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		raw, err := xssh.ParseRawPrivateKey(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
			t.Fatal(err)
		}
		c.AuthorizedKeys = append(c.AuthorizedKeys, pub)
		c.Passwords = map[string]string{"ops": secret}
	})
	startAgent(t, keyring)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte(secret+"\nsecond line ignored\n"), 0o600)
	badFile := filepath.Join(dir, "bad")
	os.WriteFile(badFile, []byte("nope\n"), 0o600)
	strangerKey, _, _ := sshd.GenerateClientKey(t.TempDir())
	t.Setenv("LAB_PW", secret)
	t.Setenv("LAB_PW_WRONG", "wrong-"+secret)

	for _, tc := range []struct {
		name string
		cred inventory.Credential
		ok   bool
		want string // in the error
	}{
		{"key file", inventory.Credential{User: "lab", KeyFile: d.keyPath}, true, ""},
		{"agent", inventory.Credential{User: "lab", Agent: true}, true, ""},
		{"password env", inventory.Credential{User: "ops", PasswordEnv: "LAB_PW"}, true, ""},
		{"password file", inventory.Credential{User: "ops", PasswordFile: pwFile}, true, ""},
		{"unauthorised key", inventory.Credential{User: "lab", KeyFile: strangerKey}, false, `authentication as "lab" failed`},
		{"wrong password env", inventory.Credential{User: "ops", PasswordEnv: "LAB_PW_WRONG"}, false, "authentication"},
		{"wrong password file", inventory.Credential{User: "ops", PasswordFile: badFile}, false, "authentication"},
		{"unset env", inventory.Credential{User: "ops", PasswordEnv: "LAB_PW_UNSET"}, false, "$LAB_PW_UNSET is not set"},
		{"missing key file", inventory.Credential{User: "lab", KeyFile: filepath.Join(dir, "none")}, false, "key_file"},
		{"no method", inventory.Credential{User: "lab"}, false, "names no method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := d.target
			tg.Name, tg.Cred = "h1-"+strings.ReplaceAll(tc.name, " ", "-"), tc.cred
			r, err := d.pool.Exec(context.Background(), tg, "echo in")
			if tc.ok {
				if err != nil || string(r.Stdout) != "in\n" {
					t.Fatalf("%v %v", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "device "+tg.Name) {
				t.Fatalf("got %v, want an error naming the device and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error leaks the password: %v", err)
			}
		})
	}

	t.Run("agent unset", func(t *testing.T) {
		t.Setenv("SSH_AUTH_SOCK", "")
		tg := d.target
		tg.Name, tg.Cred = "h1-noagent", inventory.Credential{User: "lab", Agent: true}
		if _, err := d.pool.Exec(context.Background(), tg, "echo in"); err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
			t.Fatalf("got %v", err)
		}
	})
}
