package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
)

// withSFTP runs fn with an SFTP client on t's pooled connection (one
// session, counted like an exec). The client is closed when ctx ends,
// which aborts a transfer in progress.
func (p *Pool) withSFTP(ctx context.Context, t Target, fn func(*sftp.Client) error) error {
	s, release, err := p.session(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Close() }) // unblocks the subsystem request and the version exchange
	sc, err := newSFTP(s)
	if !stop() {
		if err == nil {
			sc.Close()
		}
		return t.errorf("sftp: %w", ctx.Err())
	}
	if err != nil {
		return t.errorf("sftp: %w", err)
	}
	// The session is closed before the client, whose Close waits for the
	// server to end the subsystem: a hung server never does by itself.
	// Every request fn made has its answer by then.
	closeBoth := func() { s.Close(); sc.Close() }
	stop = context.AfterFunc(ctx, closeBoth)
	err = fn(sc)
	stop()
	closeBoth()
	if ctx.Err() != nil {
		return t.errorf("sftp: %w", ctx.Err())
	}
	return err
}

// newSFTP starts the sftp subsystem on s, as sftp.NewClient does on a
// session of its own opening; the pool opens it (Pool.session), which
// gives up on a connection that dies meanwhile.
func newSFTP(s *xssh.Session) (*sftp.Client, error) {
	w, err := s.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := s.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := s.StderrPipe()
	if err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }() // unread, it would hold the channel's window
	if err := s.RequestSubsystem("sftp"); err != nil {
		return nil, err
	}
	return sftp.NewClientPipe(r, w)
}

// Upload copies a local file to remotePath on t with the given mode,
// creating remote parent directories. The file appears whole or not at all:
// it is written beside the target and renamed into place.
func (p *Pool) Upload(ctx context.Context, t Target, localPath, remotePath string, mode os.FileMode) error {
	f, err := os.Open(localPath)
	if err != nil {
		return t.errorf("upload: %w", err)
	}
	defer f.Close()
	return p.put(ctx, t, remotePath, f, mode)
}

// WriteFile writes data to remotePath on t, as Upload does.
func (p *Pool) WriteFile(ctx context.Context, t Target, remotePath string, data []byte, mode os.FileMode) error {
	return p.put(ctx, t, remotePath, bytes.NewReader(data), mode)
}

func (p *Pool) put(ctx context.Context, t Target, remote string, r io.Reader, mode os.FileMode) error {
	return p.withSFTP(ctx, t, func(sc *sftp.Client) error {
		if dir := path.Dir(remote); dir != "." && dir != "/" {
			if err := sc.MkdirAll(dir); err != nil {
				return t.errorf("mkdir %s: %w", dir, err)
			}
		}
		// A name of its own: a writer that gave up on a dropped connection
		// may still have requests on their way to the server (an open that
		// truncates), which must not land in this writer's file.
		tmp := remote + ".labctl-part-" + rand.Text()[:8]
		w, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return t.errorf("create %s: %w", tmp, err)
		}
		_, err = io.Copy(w, r)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = sc.Chmod(tmp, mode.Perm())
		}
		if err == nil {
			err = rename(sc, tmp, remote)
		}
		if err != nil {
			_ = sc.Remove(tmp)
			return t.errorf("write %s: %w", remote, err)
		}
		return nil
	})
}

// rename replaces dst atomically where the server offers posix-rename
// (OpenSSH does); plain SFTP rename refuses an existing target.
func rename(sc *sftp.Client, src, dst string) error {
	if _, ok := sc.HasExtension("posix-rename@openssh.com"); ok {
		return sc.PosixRename(src, dst)
	}
	_ = sc.Remove(dst)
	return sc.Rename(src, dst)
}

// Download copies remotePath on t to localPath (written beside it and
// renamed into place, so a failed transfer leaves no partial file).
func (p *Pool) Download(ctx context.Context, t Target, remotePath, localPath string) error {
	return p.withSFTP(ctx, t, func(sc *sftp.Client) error {
		r, err := sc.Open(remotePath)
		if err != nil {
			return t.errorf("open %s: %w", remotePath, err)
		}
		defer r.Close()
		tmp := localPath + ".labctl-part"
		w, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return t.errorf("download %s: %w", remotePath, err)
		}
		_, err = io.Copy(w, r)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, localPath)
		}
		if err != nil {
			os.Remove(tmp)
			return t.errorf("download %s to %s: %w", remotePath, localPath, err)
		}
		return nil
	})
}

// ReadFile reads remotePath on t.
func (p *Pool) ReadFile(ctx context.Context, t Target, remotePath string) ([]byte, error) {
	var out []byte
	err := p.withSFTP(ctx, t, func(sc *sftp.Client) error {
		f, err := sc.Open(remotePath)
		if err != nil {
			return t.errorf("open %s: %w", remotePath, err)
		}
		defer f.Close()
		if out, err = io.ReadAll(f); err != nil {
			return t.errorf("read %s: %w", remotePath, err)
		}
		return nil
	})
	return out, err
}

// FileSHA256 is the hex sha256 of a local file: what `sha256sum` prints
// for the copy on a device, so an upload can be skipped or verified.
func FileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
