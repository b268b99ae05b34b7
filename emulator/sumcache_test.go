package emulator

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSumCacheFollowsTheFile: the cached SHA-256 is the file's, and a file
// rewritten with other bytes of the same size is hashed again.
func TestSumCacheFollowsTheFile(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "agent")
	want := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	var c sumCache
	for i, content := range [][]byte{[]byte("version 1"), []byte("version 1"), []byte("version 2")} {
		if i != 1 { // the second look finds the file unchanged
			if err := os.WriteFile(f, content, 0o755); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(time.Duration(i) * time.Second)
			if err := os.Chtimes(f, at, at); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.of(f)
		if err != nil || got != want(content) {
			t.Errorf("look %d: %s %v, want %s", i, got, err, want(content))
		}
	}
	if _, err := c.of(f + ".missing"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not exist", err)
	}
}
