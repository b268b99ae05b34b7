package ssh_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

func TestUploadDownloadRoundTrip(t *testing.T) {
	d := newDevice(t, sshdrv.Config{}, nil)
	ctx := context.Background()
	payload := make([]byte, 3<<20+17) // several SFTP packets, not a round size
	rand.Read(payload)
	local := filepath.Join(t.TempDir(), "labctl")
	if err := os.WriteFile(local, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.pool.Upload(ctx, d.target, local, "/opt/labctl/bin/labctl", 0o755); err != nil {
		t.Fatal(err)
	}
	onDevice := filepath.Join(d.root, "opt/labctl/bin/labctl")
	fi, err := os.Stat(onDevice)
	if err != nil || fi.Mode().Perm() != 0o755 || fi.Size() != int64(len(payload)) {
		t.Fatalf("on the device: %v %v, want %d bytes mode 0755", fi, err, len(payload))
	}
	back := filepath.Join(t.TempDir(), "back")
	if err := d.pool.Download(ctx, d.target, "/opt/labctl/bin/labctl", back); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(back); !bytes.Equal(b, payload) {
		t.Fatalf("downloaded %d bytes differ from the %d uploaded", len(b), len(payload))
	}

	// WriteFile replaces an existing file whole; ReadFile reads it back.
	if err := d.pool.WriteFile(ctx, d.target, "/opt/labctl/bin/labctl", []byte("v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := d.pool.ReadFile(ctx, d.target, "/opt/labctl/bin/labctl"); err != nil || string(b) != "v2" {
		t.Fatalf("ReadFile = %q %v", b, err)
	}
	if fi, _ := os.Stat(onDevice); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode after WriteFile = %v", fi.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(onDevice))
	if len(ents) != 1 {
		t.Errorf("temporary files left on the device: %v", ents)
	}
	if n := d.srv.Connections(); n != 1 {
		t.Errorf("file transfers used %d connections, want the pooled one", n)
	}
}

func TestFileErrorsNameDeviceAndPath(t *testing.T) {
	d := newDevice(t, sshdrv.Config{}, nil)
	ctx := context.Background()
	_, err := d.pool.ReadFile(ctx, d.target, "/no/such/file")
	if err == nil || !strings.Contains(err.Error(), "device h1") || !strings.Contains(err.Error(), "/no/such/file") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
	if err := d.pool.Download(ctx, d.target, "/no/such/file", filepath.Join(t.TempDir(), "x")); err == nil {
		t.Error("Download of a missing file succeeded")
	}
	if err := d.pool.Upload(ctx, d.target, "/no/local/file", "/x", 0o644); err == nil || !strings.Contains(err.Error(), "device h1") {
		t.Errorf("Upload of a missing local file: %v", err)
	}
	// The device's SFTP is chrooted: a path climbing out stays inside.
	if err := d.pool.WriteFile(ctx, d.target, "../../../escape.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.root, "escape.txt")); err != nil {
		t.Errorf("../ path: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.pool.WriteFile(cctx, d.target, "/x", []byte("x"), 0o644); err == nil {
		t.Error("a cancelled context still wrote")
	}
}

// TestWritersOfOnePathNeverMix: two transfers to the same path at once (a
// writer that gave up on a dropped connection still has requests on their
// way, or two runs share a home directory) leave one of the two files
// whole, never a mix, and no temporary file.
func TestWritersOfOnePathNeverMix(t *testing.T) {
	t.Parallel()
	d := newDevice(t, sshdrv.Config{}, nil)
	ctx := context.Background()
	a, b := bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<20)
	for i := range 10 {
		errs := make(chan error, 2)
		for _, content := range [][]byte{a, b} {
			go func() { errs <- d.pool.WriteFile(ctx, d.target, "/opt/labctl/qos/x.py", content, 0o644) }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(filepath.Join(d.root, "opt/labctl/qos/x.py"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("round %d: the file is neither writer's whole: %d bytes, %d of them a", i, len(got), bytes.Count(got, []byte("a")))
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(d.root, "opt/labctl/qos")); len(ents) != 1 {
		t.Errorf("files left beside the one written: %v", ents)
	}
}
