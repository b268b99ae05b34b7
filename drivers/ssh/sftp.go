package ssh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/pkg/sftp"
)

// withSFTP runs fn with an SFTP client on t's connection; the client is
// closed when ctx ends, which aborts the transfer.
func (p *Pool) withSFTP(ctx context.Context, t Target, fn func(*sftp.Client) error) error {
	for i := 0; ; i++ {
		c, err := p.client(ctx, t)
		if err != nil {
			return err
		}
		sc, err := sftp.NewClient(c.Client)
		if err != nil {
			p.drop(t, c)
			if i == 1 {
				return fmt.Errorf("device %s: sftp: %w", t.Name, err)
			}
			continue
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				sc.Close()
			case <-done:
			}
		}()
		err = fn(sc)
		close(done)
		sc.Close()
		if ctx.Err() != nil {
			return fmt.Errorf("device %s: %w", t.Name, ctx.Err())
		}
		return err
	}
}

// Upload copies a local file to the device, creating parent directories.
func (p *Pool) Upload(ctx context.Context, t Target, local, remote string, mode os.FileMode) error {
	f, err := os.Open(local)
	if err != nil {
		return fmt.Errorf("upload to %s: %w", t.Name, err)
	}
	defer f.Close()
	return p.put(ctx, t, remote, f, mode)
}

// WriteFile writes data to a remote file.
func (p *Pool) WriteFile(ctx context.Context, t Target, remote string, data []byte, mode os.FileMode) error {
	return p.put(ctx, t, remote, bytes.NewReader(data), mode)
}

func (p *Pool) put(ctx context.Context, t Target, remote string, r io.Reader, mode os.FileMode) error {
	return p.withSFTP(ctx, t, func(sc *sftp.Client) error {
		if err := sc.MkdirAll(path.Dir(remote)); err != nil {
			return fmt.Errorf("device %s: mkdir %s: %w", t.Name, path.Dir(remote), err)
		}
		tmp := remote + ".part"
		w, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return fmt.Errorf("device %s: create %s: %w", t.Name, tmp, err)
		}
		if _, err := io.Copy(w, r); err != nil {
			w.Close()
			return fmt.Errorf("device %s: write %s: %w", t.Name, remote, err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("device %s: write %s: %w", t.Name, remote, err)
		}
		if err := sc.Chmod(tmp, mode); err != nil {
			return fmt.Errorf("device %s: chmod %s: %w", t.Name, remote, err)
		}
		_ = sc.Remove(remote)
		if err := sc.Rename(tmp, remote); err != nil {
			return fmt.Errorf("device %s: rename %s: %w", t.Name, remote, err)
		}
		return nil
	})
}

// Download copies a remote file to a local path.
func (p *Pool) Download(ctx context.Context, t Target, remote, local string) error {
	b, err := p.ReadFile(ctx, t, remote)
	if err != nil {
		return err
	}
	return os.WriteFile(local, b, 0o644)
}

// ReadFile reads a remote file.
func (p *Pool) ReadFile(ctx context.Context, t Target, remote string) ([]byte, error) {
	var out []byte
	err := p.withSFTP(ctx, t, func(sc *sftp.Client) error {
		f, err := sc.Open(remote)
		if err != nil {
			return fmt.Errorf("device %s: open %s: %w", t.Name, remote, err)
		}
		defer f.Close()
		out, err = io.ReadAll(f)
		if err != nil {
			return fmt.Errorf("device %s: read %s: %w", t.Name, remote, err)
		}
		return nil
	})
	return out, err
}
