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

// GenerateHostKey makes an ed25519 host key (kept in memory: an emulated
// device gets a fresh one each time the lab comes up).
func GenerateHostKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

// GenerateClientKey writes an ed25519 key pair into dir: id_ed25519 (OpenSSH
// private key format, mode 0600, usable by ssh -i) and id_ed25519.pub.
func GenerateClientKey(dir string) (privPath string, pub ssh.PublicKey, err error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, fmt.Errorf("client key: %w", err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "labctl emulated lab")
	if err != nil {
		return "", nil, fmt.Errorf("client key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return "", nil, fmt.Errorf("client key: %w", err)
	}
	privPath = filepath.Join(dir, "id_ed25519")
	// Remove first: WriteFile keeps the mode of an existing file.
	if err := os.Remove(privPath); err != nil && !os.IsNotExist(err) {
		return "", nil, fmt.Errorf("client key %s: %w", privPath, err)
	}
	if err := os.WriteFile(privPath, pem.EncodeToMemory(blk), 0o600); err != nil {
		return "", nil, fmt.Errorf("client key %s: %w", privPath, err)
	}
	if err := os.WriteFile(privPath+".pub", ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o644); err != nil {
		return "", nil, fmt.Errorf("client key %s.pub: %w", privPath, err)
	}
	return privPath, signer.PublicKey(), nil
}

// KnownHost is one known_hosts entry.
type KnownHost struct {
	Addr string // host:port
	Key  ssh.PublicKey
}

// WriteKnownHosts writes entries in OpenSSH known_hosts format, addresses
// in the "[host]:port" form for ports other than 22.
func WriteKnownHosts(path string, entries []KnownHost) error {
	var b strings.Builder
	for _, e := range entries {
		if _, _, err := net.SplitHostPort(e.Addr); err != nil {
			return fmt.Errorf("known_hosts %s: %w", path, err)
		}
		if e.Key == nil {
			return fmt.Errorf("known_hosts %s: no key for %s", path, e.Addr)
		}
		b.WriteString(knownhosts.Line([]string{knownhosts.Normalize(e.Addr)}, e.Key) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("known_hosts %s: %w", path, err)
	}
	return nil
}
