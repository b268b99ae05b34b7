package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// verifySelf checks, before the agent reads or runs anything, that the
// program running is the binary labctl shipped and that nobody else could
// have replaced it: its content's SHA-256 is sum, and the directory it
// lives in and the two above it (StoreDir/<sum>, StoreDir, HomeDir in the
// layout labctl ships to) belong to this user and are writable by no one
// else. exe is the running program's content (/proc/self/exe on a host:
// the very file executed, whatever has since been renamed over its path).
//
// hash, when not nil, gives exe's SHA-256 (Env.Sum).
func verifySelf(exe, dir, sum string, hash func(string) (string, error)) error {
	if hash == nil {
		hash = sha256Of
	}
	got, err := hash(exe)
	if err != nil {
		return fmt.Errorf("verify own binary: %w", err)
	}
	if got != sum {
		return fmt.Errorf("own binary %s has sha256 %.12s, not %.12s as shipped: refusing to run (labctl uploads it again when it next finds it missing)", dir, got, sum)
	}
	for i := 0; i < 3; i++ {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("verify own directory: %w", err)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("directory %s is writable by others (mode %v): refusing to run a binary anyone could replace; chmod 700 %s", dir, fi.Mode().Perm(), dir)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("directory %s belongs to uid %d, not this user (%d): refusing to run", dir, st.Uid, os.Getuid())
		}
		dir = filepath.Dir(dir)
	}
	return nil
}

func sha256Of(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
