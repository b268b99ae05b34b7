package ssh

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a host key that known_hosts does not vouch for: either no
// entry for the address (Mismatch false) or an entry with another key.
type HostKeyError struct {
	Device, Addr string
	KnownHosts   string // the file consulted
	Fingerprint  string // SHA256 fingerprint the host presented
	Mismatch     bool
	Line         int // known_hosts line holding the other key (Mismatch only)
}

func (e *HostKeyError) Error() string {
	if e.Mismatch {
		return fmt.Sprintf("HOST KEY MISMATCH for %s (%s): it presented %s but %s line %d holds another key; "+
			"someone may be intercepting the connection, or the host was reinstalled (then update known_hosts)",
			e.Device, e.Addr, e.Fingerprint, e.KnownHosts, e.Line)
	}
	return fmt.Sprintf("host key for %s (%s) not in known_hosts %s (it presented %s; add it once you have checked it)",
		e.Device, e.Addr, e.KnownHosts, e.Fingerprint)
}

// hostKeyCallback verifies against known_hosts, re-read at a dial whenever
// the file changed so an emulated lab that rewrites it is picked up. The key is looked up
// under t.Addr as the lab names it (a host name in known_hosts), whatever
// name or address the connection was made with.
func (p *Pool) hostKeyCallback(t Target) (xssh.HostKeyCallback, error) {
	if p.cfg.KnownHosts == "" {
		return nil, errors.New("no known_hosts file configured; host keys are always verified")
	}
	kh, err := p.knownHosts()
	if err != nil {
		return nil, fmt.Errorf("known_hosts: %w", err)
	}
	return func(_ string, remote net.Addr, k xssh.PublicKey) error {
		err := kh(t.Addr, remote, k)
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		he := &HostKeyError{Device: t.Name, Addr: t.Addr, KnownHosts: p.cfg.KnownHosts,
			Fingerprint: xssh.FingerprintSHA256(k), Mismatch: len(ke.Want) > 0}
		if he.Mismatch {
			he.Line = ke.Want[0].Line
		}
		return he
	}, nil
}

// authMethods turns a credential reference into auth methods, reading the
// secret only now. x/crypto tries each method type once, so every public
// key (file and agent) goes into one "publickey" method and the first
// password source wins. The closer releases the agent connection.
func authMethods(t Target) ([]xssh.AuthMethod, io.Closer, error) {
	c := t.Cred
	var signers []xssh.Signer
	var methods []xssh.AuthMethod
	closer := io.Closer(nopCloser{})
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("credential key_file: %w", err)
		}
		s, err := xssh.ParsePrivateKey(b)
		if err != nil { // never echo the file's content
			return nil, nil, fmt.Errorf("credential key_file %s: %w (passphrase-protected keys belong in the ssh-agent)", c.KeyFile, err)
		}
		signers = append(signers, s)
	}
	if c.Agent {
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, nil, errors.New("credential wants the ssh-agent but SSH_AUTH_SOCK is not set")
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, nil, fmt.Errorf("ssh-agent: %w", err)
		}
		closer = conn
		ag := agent.NewClient(conn)
		fileSigners := signers
		signers = nil
		methods = append(methods, xssh.PublicKeysCallback(func() ([]xssh.Signer, error) {
			as, err := ag.Signers()
			if err != nil {
				return nil, fmt.Errorf("ssh-agent: %w", err)
			}
			return append(append([]xssh.Signer{}, fileSigners...), as...), nil
		}))
	}
	if len(signers) > 0 {
		methods = append(methods, xssh.PublicKeys(signers...))
	}
	if pw, ok, err := password(c.PasswordEnv, c.PasswordFile); err != nil {
		closer.Close()
		return nil, nil, err
	} else if ok {
		methods = append(methods, xssh.Password(pw))
	}
	if len(methods) == 0 {
		closer.Close()
		return nil, nil, errors.New("credential names no method (key_file, agent, password_env, password_file)")
	}
	return methods, closer, nil
}

// password reads the secret from the environment variable or the first line
// of the file. Errors name the variable or file, never the value.
func password(env, file string) (string, bool, error) {
	if env != "" {
		pw, ok := os.LookupEnv(env)
		if !ok || pw == "" {
			return "", false, fmt.Errorf("credential password_env: $%s is not set", env)
		}
		return pw, true, nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", false, fmt.Errorf("credential password_file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return "", false, fmt.Errorf("credential password_file %s: first line is empty", file)
		}
		return line, true, nil
	}
	return "", false, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// ClientConfig is the x/crypto/ssh configuration for t with the pool's
// host key verification and t's credential: the pool's own dials and
// protocols that open their own SSH connection (NETCONF) use it. Close
// the returned Closer after the handshake (it holds the ssh-agent
// connection, if any). Its errors name the device and are not worth a
// retry: a known_hosts file or a credential to fix.
func (p *Pool) ClientConfig(t Target) (*xssh.ClientConfig, io.Closer, error) {
	cb, err := p.hostKeyCallback(t)
	if err != nil {
		return nil, nil, t.errorf("%w", err)
	}
	auth, closer, err := authMethods(t)
	if err != nil {
		return nil, nil, t.errorf("%w", err)
	}
	return &xssh.ClientConfig{User: t.Cred.User, Auth: auth, HostKeyCallback: cb, Timeout: p.cfg.DialTimeout}, closer, nil
}

// knownHosts is the parsed known_hosts file, parsed again only when the
// file changed (its size, modification time or inode): a lab of a thousand
// hosts has a thousand lines, and parsing them at each of its thousand
// dials cost seconds.
func (p *Pool) knownHosts() (xssh.HostKeyCallback, error) {
	fi, err := os.Stat(p.cfg.KnownHosts)
	if err != nil {
		return nil, err
	}
	v := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.ino = st.Ino
	}
	p.khMu.Lock()
	defer p.khMu.Unlock()
	if p.kh != nil && p.khStamp == v {
		return p.kh, nil
	}
	kh, err := knownhosts.New(p.cfg.KnownHosts)
	if err != nil {
		return nil, err
	}
	p.kh, p.khStamp = kh, v
	return kh, nil
}

// fileStamp tells versions of a file apart.
type fileStamp struct {
	size, mtime int64
	ino         uint64
}
