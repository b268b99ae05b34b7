package emulator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/internal/testlab"
)

func (l *lab) on(t *testing.T, dev, cmd string) *sshdrv.Result {
	t.Helper()
	r, err := l.pool.Exec(context.Background(), testlab.Target(t, l.inv, dev, sshdrv.EndpointSSH), cmd)
	if err != nil {
		t.Fatalf("%s: %s: %v", dev, cmd, err)
	}
	return r
}

// TestSwitchSDECommands: the emulated SDE's command lines, printed lines
// and errors (hardware-surfaces 3.2), over SSH.
func TestSwitchSDECommands(t *testing.T) {
	l := start(t)
	for _, tc := range []struct {
		cmd    string
		status int
		out    string // in stdout or stderr
	}{
		{"bf_switchd --conf-file /x.conf", 1, "ERROR: --install-dir and --conf-file must be specified\n"},
		{"bf_switchd --install-dir /opt/bf-sde/install --conf-file /nope.conf", 1, "File /nope.conf not found\n"},
		{"run_switchd.sh -p nosuch", 1, "Using SDE /opt/bf-sde\nUsing SDE_INSTALL /opt/bf-sde/install\n"},
		{"run_switchd.sh -p nosuch --arch tf2", 1, "File /opt/bf-sde/install/share/p4/targets/tofino2/nosuch.conf not found\n"},
		{"start-stop-daemon --start --background --exec /usr/bin/nosuch", 2, "unable to stat /usr/bin/nosuch"},
		{"mkdir /a/b", 1, "mkdir: cannot create directory '/a/b': No such file or directory\n"},
		{"mkdir -p /a/b/c", 0, ""},
		{"rm /a", 1, "rm: cannot remove '/a': Is a directory\n"},
		{"rm -rf /", 1, "rm: it is dangerous to operate recursively on '/'"},
		{"mkdir -p /d/x", 0, ""},
		{"mv -T /a /d", 1, "mv: cannot move '/a' to '/d': Directory not empty\n"},
		{"mv -T /a/b /e", 0, ""},
		{"rm -r /e", 0, ""},
		{"rm -f /e /nothing", 0, ""},
		{"rm /nothing", 1, "rm: cannot remove '/nothing': No such file or directory\n"},
		{"sha256sum /nothing", 1, "sha256sum: /nothing: No such file or directory\n"},
	} {
		r := l.on(t, "leaf1", tc.cmd)
		if r.ExitStatus != tc.status || !strings.Contains(string(r.Stdout)+string(r.Stderr), tc.out) {
			t.Errorf("%s: exit %d, stdout %q stderr %q; want exit %d and %q", tc.cmd, r.ExitStatus, r.Stdout, r.Stderr, tc.status, tc.out)
		}
	}
}

// TestBackgroundSwitchdIsAProcess: a switch boots with one bf_switchd
// (the default program's); start-stop-daemon detaches another; pgrep sees
// it, its output goes to the log, kill ends it.
func TestBackgroundSwitchdIsAProcess(t *testing.T) {
	l := start(t)
	boot := strings.TrimSpace(string(l.on(t, "spine1", "pgrep -f bin/bf_switchd").Stdout))
	if strings.Count(boot, "\n") != 0 || boot == "" {
		t.Fatalf("a fresh switch runs bf_switchd %q, want one process", boot)
	}
	if log := string(l.on(t, "spine1", "cat /var/log/bf_switchd.log").Stdout); !strings.Contains(log, "p4_name: labctl") ||
		!strings.Contains(log, "bf_switchd: initialized 1 devices") {
		t.Errorf("the boot bf_switchd's log:\n%s", log)
	}
	if r := l.on(t, "spine1", "kill "+boot); r.ExitStatus != 0 {
		t.Fatal(r.Err())
	}
	for i := 0; i < 100 && l.on(t, "spine1", "pgrep -f bin/bf_switchd").ExitStatus != 1; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	conf := `{"p4_devices": [{"device-id": 0, "p4_programs": [{"program-name": "p", "bfrt-config": "share/p/bf-rt.json",
		"p4_pipelines": [{"p4_pipeline_name": "pipe", "context": "share/p/pipe/context.json", "config": "share/p/pipe/tofino.bin"}]}]}]}`
	tg := testlab.Target(t, l.inv, "spine1", sshdrv.EndpointSSH)
	ctx := context.Background()
	for name, data := range map[string]string{"/etc/p.conf": conf, "/opt/bf-sde/install/share/p/bf-rt.json": "{}",
		"/opt/bf-sde/install/share/p/pipe/context.json": "{}"} {
		if err := l.pool.WriteFile(ctx, tg, name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const start = "start-stop-daemon --start --background --make-pidfile --pidfile /run/sw.pid --output /run/sw.log " +
		"--exec /opt/bf-sde/install/bin/bf_switchd -- --install-dir /opt/bf-sde/install --conf-file /etc/p.conf --background"
	if r := l.on(t, "spine1", "mkdir -p /run"); r.ExitStatus != 0 {
		t.Fatal(r.Err())
	}
	if r := l.on(t, "spine1", start); r.ExitStatus != 0 {
		t.Fatal(r.Err())
	}
	pid := strings.TrimSpace(string(l.on(t, "spine1", "cat /run/sw.pid").Stdout))
	if got := strings.TrimSpace(string(l.on(t, "spine1", "pgrep -f bin/bf_switchd").Stdout)); got != pid || pid == "" {
		t.Fatalf("pgrep found %q, pid file says %q", got, pid)
	}
	if r := l.on(t, "spine1", start); r.ExitStatus != 1 || !strings.Contains(string(r.Stdout), "already running") {
		t.Errorf("a second start with a live pid file: %+v", r)
	}
	// the binary is missing: adding the device fails, the process runs on
	var log string
	for i := 0; i < 100 && !strings.Contains(log, "initialized"); i++ {
		log = string(l.on(t, "spine1", "cat /run/sw.log").Stdout)
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log, "ERROR: device add failed for dev_id 0: program p: /opt/bf-sde/install/share/p/pipe/tofino.bin: No such file or directory\n") ||
		!strings.Contains(log, "bf_switchd: initialized 0 devices\n") || !strings.Contains(log, "running in background; driver shell is disabled") {
		t.Errorf("log:\n%s", log)
	}
	if r := l.on(t, "spine1", "kill "+pid); r.ExitStatus != 0 {
		t.Fatal(r.Err())
	}
	for i := 0; i < 100; i++ {
		if l.on(t, "spine1", "pgrep -f bin/bf_switchd").ExitStatus == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("bf_switchd outlived kill")
}
