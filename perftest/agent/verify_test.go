package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With --sha256 the agent runs only as the binary labctl shipped, from
// directories only its user can write: a binary whose content changed
// after upload, or one in a directory others may write (as /tmp is), is
// refused before it reads its schedule.
func TestVerifySelfAtExec(t *testing.T) {
	t.Parallel()
	content := []byte("labctl-agent build 1")
	s := sha256.Sum256(content)
	sum := hex.EncodeToString(s[:])
	home := filepath.Join(t.TempDir(), HomeDir)
	dir := filepath.Join(home, "agent", sum)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, BinaryName)
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	env := func() (Env, *bytes.Buffer) {
		var stderr bytes.Buffer
		e := LocalEnv(&bytes.Buffer{}, &stderr)
		e.Executable, e.BinaryDir = bin, dir
		return e, &stderr
	}
	args := []string{"run", "--sha256", sum, "--schedule", filepath.Join(dir, "none.json"), "--host", "h1", "--out", filepath.Join(dir, "out.json")}
	e, stderr := env()
	if code := Main(context.Background(), args, e); code != 1 || !strings.Contains(stderr.String(), "schedule") {
		t.Fatalf("the shipped binary: exit %d %q, want it past the check (to the missing schedule)", code, stderr)
	}
	if err := os.WriteFile(bin, []byte("labctl-agent build 1, patched"), 0o755); err != nil {
		t.Fatal(err)
	}
	e, stderr = env()
	if code := Main(context.Background(), args, e); code != 1 || !strings.Contains(stderr.String(), "not "+sum[:12]+" as shipped") {
		t.Errorf("a changed binary: exit %d %q, want a refusal naming the hash", code, stderr)
	}
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(home, "agent"), 0o777); err != nil {
		t.Fatal(err)
	}
	e, stderr = env()
	if code := Main(context.Background(), args, e); code != 1 || !strings.Contains(stderr.String(), "writable by others") {
		t.Errorf("a world-writable store: exit %d %q, want a refusal", code, stderr)
	}
}
