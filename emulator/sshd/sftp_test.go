package sshd_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pkg/sftp"

	"github.com/labctl/labctl/emulator/sshd"
)

func (d *device) sftp(t *testing.T) *sftp.Client {
	t.Helper()
	c, err := sftp.NewClient(d.client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSFTPRoundTripInsideRoot(t *testing.T) {
	d := startDevice(t, nil)
	c := d.sftp(t)
	if err := c.MkdirAll("/opt/labctl/bin"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Create("/opt/labctl/bin/agent.part")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("#!/bin/sh\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Chmod("/opt/labctl/bin/agent.part", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.PosixRename("/opt/labctl/bin/agent.part", "/opt/labctl/bin/agent"); err != nil {
		t.Fatal(err)
	}

	// The file is where the device root says, with the mode asked for.
	fi, err := os.Stat(filepath.Join(d.root, "opt/labctl/bin/agent"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("on disk: %v %v, want mode 0755", fi, err)
	}
	st, err := c.Stat("/opt/labctl/bin/agent")
	if err != nil || st.Size() != 10 || st.Mode().Perm() != 0o755 {
		t.Fatalf("sftp stat: %v %v", st, err)
	}
	r, err := c.Open("/opt/labctl/bin/agent")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "#!/bin/sh\n" {
		t.Fatalf("read back %q %v", b, err)
	}
	if err := c.Truncate("/opt/labctl/bin/agent", 2); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(d.root, "opt/labctl/bin/agent")); string(b) != "#!" {
		t.Errorf("after truncate: %q", b)
	}

	ents, err := c.ReadDir("/opt/labctl/bin")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 1 || names[0] != "agent" {
		t.Errorf("list = %v, want [agent] (the .part was renamed)", names)
	}
	if err := c.Remove("/opt/labctl/bin/agent"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveDirectory("/opt/labctl/bin"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.root, "opt/labctl/bin")); !os.IsNotExist(err) {
		t.Errorf("rmdir left %v", err)
	}
}

func TestSFTPCannotLeaveRoot(t *testing.T) {
	d := startDevice(t, nil)
	outside := filepath.Join(filepath.Dir(d.root), "outside.txt")
	if err := os.WriteFile(outside, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"abs-link": "/etc",                   // absolute symlink
		"up-link":  "../outside.txt",         // relative symlink climbing out
		"up-dir":   "..",                     // directory symlink climbing out
		"in-link":  "opt/../allowed.txt",     // stays inside: must work
		"deep":     "../root/../outside.txt", // climbs out via its own dir
	} {
		if err := os.Symlink(target, filepath.Join(d.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(d.root, "opt"), 0o755)
	os.WriteFile(filepath.Join(d.root, "allowed.txt"), []byte("ok"), 0o644)
	c := d.sftp(t)

	for _, p := range []string{
		"../../etc/passwd", "/../../../etc/passwd", "../outside.txt",
		"/abs-link/passwd", "/up-link", "/up-dir/outside.txt", "/deep",
	} {
		t.Run("read "+p, func(t *testing.T) {
			f, err := c.Open(p)
			if err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				t.Fatalf("opened %s outside the device root: %q", p, b)
			}
		})
	}
	for _, p := range []string{"/up-dir/planted", "/abs-link/planted", "/up-link"} {
		t.Run("write "+p, func(t *testing.T) {
			if f, err := c.Create(p); err == nil {
				f.Close()
				t.Errorf("created %s through a symlink out of the root", p)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "host secret" {
		t.Errorf("a file outside the root changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(d.root), "planted")); err == nil {
		t.Error("a file was planted outside the root")
	}

	// ".." above "/" stays at "/", as in a chroot.
	f, err := c.Create("../../escape.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(d.root, "escape.txt")); err != nil {
		t.Errorf("../../escape.txt should land in the root: %v", err)
	}
	// A symlink that stays inside is fine; Lstat sees links themselves.
	if f, err := c.Open("/in-link"); err != nil {
		t.Errorf("a symlink inside the root was refused: %v", err)
	} else {
		f.Close()
	}
	if fi, err := c.Lstat("/abs-link"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("lstat of a symlink: %v %v", fi, err)
	}
}

func TestSubsystemFromConfig(t *testing.T) {
	d := startDevice(t, func(c *sshd.Config) {
		c.Subsystems = map[string]sshd.SubsystemHandler{
			"netconf": func(_ context.Context, rw io.ReadWriter) error {
				_, err := io.WriteString(rw, "<hello/>]]>]]>")
				return err
			},
		}
	})
	s, err := d.client(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestSubsystem("netconf"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out)
	if err != nil || string(b) != "<hello/>]]>]]>" {
		t.Errorf("netconf subsystem said %q %v", b, err)
	}
	s2, err := d.client(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.RequestSubsystem("nosuch"); err == nil {
		t.Error("an unknown subsystem was accepted")
	}
}

// TestSFTPMountServesASharedDirectory: a mounted path is served from its
// own directory (relative client paths start at the root, as a home
// directory), a rename within it works, and one out of it is refused.
func TestSFTPMountServesASharedDirectory(t *testing.T) {
	shared := t.TempDir()
	d := startDevice(t, func(c *sshd.Config) { c.Mounts = map[string]string{"/.labctl/agent": shared} })
	c := d.sftp(t)
	if err := c.MkdirAll(".labctl/agent/abc"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Create(".labctl/agent/abc/bin.part")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("agent")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := c.PosixRename(".labctl/agent/abc/bin.part", ".labctl/agent/abc/bin"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(shared, "abc", "bin")); err != nil || string(b) != "agent" {
		t.Fatalf("shared directory holds %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(d.root, ".labctl", "agent", "abc")); err == nil {
		t.Error("the mounted path also landed in the device's own root")
	}
	if err := c.PosixRename(".labctl/agent/abc/bin", "/bin-out"); err == nil {
		t.Error("a rename out of the mount succeeded")
	}
}
