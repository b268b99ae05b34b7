package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// FileStore keeps a lease in the file Path (JSON), changed only under an
// exclusive flock of Path+".lock" and written to a temporary file renamed
// over it. Path's directory must be one every controller host sees (and
// whose file system honours flock, e.g. local or NFSv4).
type FileStore struct{ Path string }

func (s FileStore) Take(ctx context.Context, l Lease) (*Lease, error) {
	var replaced *Lease
	err := s.locked(func() error {
		cur, ok, err := s.read()
		if err != nil {
			return err
		}
		if ok && cur.Token != l.Token {
			if cur.Stale(time.Now()) == "" {
				return &HeldError{Holder: cur}
			}
			replaced = &cur
		}
		return s.write(l)
	})
	return replaced, err
}

func (s FileStore) Renew(ctx context.Context, l Lease) error {
	return s.mine(l, func() error { return s.write(l) })
}

func (s FileStore) Release(ctx context.Context, l Lease) error {
	return s.mine(l, func() error {
		if err := os.Remove(s.Path); err != nil {
			return fmt.Errorf("lease %s: %w", s.Path, err)
		}
		return nil
	})
}

// mine runs f under the lock if the stored lease is l's (same token).
func (s FileStore) mine(l Lease, f func() error) error {
	return s.locked(func() error {
		cur, ok, err := s.read()
		if err != nil {
			return err
		}
		if !ok || cur.Token != l.Token {
			return fmt.Errorf("lab %s: %w", l.Lab, ErrLost)
		}
		return f()
	})
}

func (s FileStore) Read(ctx context.Context) (Lease, bool, error) { return s.read() }

func (s FileStore) read() (Lease, bool, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("lease %s: %w", s.Path, err)
	}
	var l Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return Lease{}, false, fmt.Errorf("lease %s: %w", s.Path, err)
	}
	return l, true, nil
}

func (s FileStore) write(l Lease) error {
	b, _ := json.MarshalIndent(l, "", "  ")
	tmp := fmt.Sprintf("%s.%d.tmp", s.Path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("lease %s: %w", s.Path, err)
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("lease %s: %w", s.Path, err)
	}
	return nil
}

// locked runs f holding the store's flock (released by the kernel if
// this process dies, so a crash never leaves the lab locked).
func (s FileStore) locked(f func() error) error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return fmt.Errorf("lease %s: %w", s.Path, err)
	}
	lf, err := os.OpenFile(s.Path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("lease %s: %w", s.Path, err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lease %s: flock: %w", s.Path, err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	return f()
}
