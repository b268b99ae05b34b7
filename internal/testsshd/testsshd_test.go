package testsshd

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStart logs in to the server with OpenSSH's own client, checking the
// host key against the known_hosts file Start wrote, and runs a command;
// a key the server was not given is refused.
func TestStart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client (Debian openssh-client)")
	}
	login := func(key string) (string, error) {
		out, err := exec.Command("ssh", "-F", "/dev/null", "-p", strconv.Itoa(s.Port), "-i", key,
			"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=yes",
			"-o", "UserKnownHostsFile="+s.KnownHosts,
			s.User+"@"+s.Host, "echo", "hello from sshd").CombinedOutput()
		return string(out), err
	}
	out, err := login(s.KeyFile)
	if err != nil {
		t.Fatalf("ssh: %v\n%s", err, out)
	}
	if !strings.Contains(out, "hello from sshd") {
		t.Errorf("ssh output %q", out)
	}
	other := filepath.Join(t.TempDir(), "other")
	writeKey(t, other)
	if out, err := login(other); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("a key not in authorized_keys: err %v, output %q", err, out)
	}
}
