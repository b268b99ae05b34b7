package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// labctl lab fault against a lab up: an SSH client's command fails
// during a drop of the host's endpoint and works after it; typos in the
// device or kind fail with exit 2 listing what there is; a missing --for
// is a usage error.
func TestLabFaultDropObservedByClient(t *testing.T) {
	const lab = "leafspine:1x1:2@100"
	home := upLab(t, lab)
	st, ok, err := emulator.LoadState(home, lab)
	if err != nil || !ok {
		t.Fatalf("lab state: %v", err)
	}
	inv, err := inventory.Load(st.LabFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts, Retries: -1, DialTimeout: 5 * time.Second})
	defer pool.Close()
	target, err := sshdrv.DeviceTarget(inv, "h1", sshdrv.EndpointSSH)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := pool.Exec(ctx, target, "hostname"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := labctl(t, home, "lab", "fault", lab, "h1", "drop-ssh", "--for", "2s")
	if err != nil || !strings.Contains(out, "h1: ssh dropped until") || !strings.Contains(out, "1 live connections closed") {
		t.Fatalf("lab fault: %v %q %q", err, out, stderr)
	}
	dropped := time.Now()
	if res, err := pool.Exec(ctx, target, "hostname"); err == nil && res.ExitStatus == 0 {
		t.Fatal("an SSH command ran on h1 during the drop")
	}
	time.Sleep(time.Until(dropped.Add(2200 * time.Millisecond)))
	if res, err := pool.Exec(ctx, target, "hostname"); err != nil || strings.TrimSpace(string(res.Stdout)) != "h1" {
		t.Errorf("after the drop: %v %+v", err, res)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"h9", "drop-ssh", "--for", "1s"}, []string{`no device "h9"`, "switches: spine1", "hosts: h1, h2"}},
		{[]string{"h1", "explode"}, []string{`unknown fault kind "explode"`, "drop-gnmi", "fail-commit"}},
		{[]string{"h1", "drop-ssh"}, []string{"drop-ssh needs --for"}},
		{[]string{"h1"}, []string{"needs LAB DEVICE KIND"}},
	} {
		_, stderr, err := labctl(t, home, append([]string{"lab", "fault", lab}, tc.args...)...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !containsAll(stderr, tc.want) {
			t.Errorf("lab fault %v: %v %q, want exit 2 with %q", tc.args, err, stderr, tc.want)
		}
	}
	if _, stderr, err := labctl(t, home, "lab", "fault", lab, "h1", "drop-gnmi", "--for", "1s"); err == nil || !strings.Contains(stderr, "h1 is a host") {
		t.Errorf("a switch's fault on a host: %v %q", err, stderr)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
