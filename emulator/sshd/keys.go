package sshd

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// GenerateHostKey makes an ed25519 host key.
func GenerateHostKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

// GenerateClientKey writes an OpenSSH ed25519 private key (0600) into dir
// and returns its path and public key.
func GenerateClientKey(dir string) (string, ssh.PublicKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, "labctl emulated lab")
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(p, pem.EncodeToMemory(blk), 0o600); err != nil {
		return "", nil, fmt.Errorf("client key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return "", nil, err
	}
	return p, signer.PublicKey(), nil
}

// KnownHost is one known_hosts entry.
type KnownHost struct {
	Addr string // host:port
	Key  ssh.PublicKey
}

// WriteKnownHosts writes entries in OpenSSH known_hosts format.
func WriteKnownHosts(path string, entries []KnownHost) error {
	var b strings.Builder
	for _, e := range entries {
		host, port, err := net.SplitHostPort(e.Addr)
		if err != nil {
			return fmt.Errorf("known_hosts: %w", err)
		}
		addr := host
		if port != "22" {
			addr = e.Addr
		}
		b.WriteString(knownhosts.Line([]string{knownhosts.Normalize(addr)}, e.Key) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("known_hosts %s: %w", path, err)
	}
	return nil
}
