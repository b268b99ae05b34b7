package emulator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
)

// A dropped SSH endpoint closes the live connection and refuses new
// ones (a client sees its command fail) until the drop ends; then the
// same client works again. A delayed one answers, but only after the
// delay.
func TestSSHDropAndDelay(t *testing.T) {
	t.Parallel()
	l, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{Seed: 1},
		sshdrv.Config{DialTimeout: 5 * time.Second, Retries: -1})
	ctx := context.Background()
	h1 := testlab.Target(t, inv, "h1", sshdrv.EndpointSSH)
	if _, err := pool.Exec(ctx, h1, "hostname"); err != nil {
		t.Fatal(err)
	}
	n, err := l.DropEndpoint("h1", emulator.EndpointSSH, 800*time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("drop: %d live connections closed, %v; want the pool's one", n, err)
	}
	if res, err := pool.Exec(ctx, h1, "hostname"); err == nil && res.ExitStatus == 0 {
		t.Fatal("a command ran on h1 during the drop of its ssh endpoint")
	}
	other := testlab.Target(t, inv, "h2", sshdrv.EndpointSSH)
	if _, err := pool.Exec(ctx, other, "hostname"); err != nil {
		t.Errorf("h2 failed during h1's drop: %v", err)
	}
	time.Sleep(time.Second)
	if res, err := pool.Exec(ctx, h1, "hostname"); err != nil || strings.TrimSpace(string(res.Stdout)) != "h1" {
		t.Fatalf("after the drop: %v %+v", err, res)
	}

	if err := l.DelayEndpoint("h2", emulator.EndpointSSH, 700*time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
	fresh := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts, Retries: -1})
	defer fresh.Close()
	start := time.Now()
	if _, err := fresh.Exec(ctx, other, "hostname"); err != nil {
		t.Fatalf("delayed endpoint: %v", err)
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Errorf("a new connection during a 700ms delay answered in %s", took)
	}
	if err := l.ClearEndpoints("h2"); err != nil {
		t.Fatal(err)
	}
	fresh2 := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts, Retries: -1})
	defer fresh2.Close()
	start = time.Now()
	if _, err := fresh2.Exec(ctx, other, "hostname"); err != nil || time.Since(start) > 500*time.Millisecond {
		t.Errorf("after clear: %v in %s", err, time.Since(start))
	}
}

// A dropped gNMI endpoint closes its live streams (the reader sees EOF)
// and new connections, and serves again after the drop; a dropped
// NETCONF subsystem ends the live session and refuses new ones while the
// switch's plain SSH keeps working.
func TestGNMIAndNETCONFDrop(t *testing.T) {
	t.Parallel()
	// plaintext: the test reads the server's first bytes (HTTP/2 SETTINGS) on a raw TCP connection
	l, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{Seed: 1, GNMIPlaintext: true},
		sshdrv.Config{DialTimeout: 5 * time.Second, Retries: -1})
	ctx := context.Background()
	sw := inv.Switches[0]
	live := openGNMI(t, sw.Mgmt.GNMI)
	if _, err := l.DropEndpoint(sw.Name, emulator.EndpointGNMI, 800*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if open(live, time.Second) {
		t.Error("the live gNMI connection survived the drop")
	}
	during, err := net.Dial("tcp", sw.Mgmt.GNMI)
	if err == nil {
		if open(during, 300*time.Millisecond) {
			t.Error("a new gNMI connection was served during the drop")
		}
		during.Close()
	}
	time.Sleep(time.Second) // past the drop's end
	after, err := net.Dial("tcp", sw.Mgmt.GNMI)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if !open(after, 300*time.Millisecond) {
		t.Error("gNMI connection refused after the drop ended")
	}
	// a delay: the server's first bytes (its HTTP/2 SETTINGS) come late
	if err := l.DelayEndpoint(sw.Name, emulator.EndpointGNMI, 600*time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
	slow, err := net.Dial("tcp", sw.Mgmt.GNMI)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	start := time.Now()
	_ = slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := slow.Read(make([]byte, 64)); err != nil || time.Since(start) < 550*time.Millisecond {
		t.Errorf("delayed gNMI endpoint: first bytes after %s (%v), want about 600ms", time.Since(start), err)
	}
	if err := l.ClearEndpoints(sw.Name); err != nil {
		t.Fatal(err)
	}

	nt := testlab.Target(t, inv, sw.Name, sshdrv.EndpointNETCONF)
	sess, err := netconf.Dial(ctx, pool, nt)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := l.DropEndpoint(sw.Name, emulator.EndpointNETCONF, 800*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.GetConfig(ctx, "running"); err == nil {
		t.Error("the live NETCONF session answered after the drop")
	}
	if s, err := netconf.Dial(ctx, pool, nt); err == nil {
		s.Close()
		t.Error("a NETCONF session opened during the drop")
	}
	if _, err := pool.Exec(ctx, testlab.Target(t, inv, sw.Name, sshdrv.EndpointSSH), "hostname"); err != nil {
		t.Errorf("the switch's SSH failed during a NETCONF-only drop: %v", err)
	}
	time.Sleep(time.Second)
	s2, err := netconf.Dial(ctx, pool, nt)
	if err != nil {
		t.Fatalf("NETCONF after the drop: %v", err)
	}
	defer s2.Close()
	if _, err := s2.GetConfig(ctx, "running"); err != nil {
		t.Errorf("NETCONF get-config after the drop: %v", err)
	}
}

// open reports whether c is still open after d: reading what the server
// sent (a gRPC server's SETTINGS) until the deadline means open; EOF or
// a reset, closed.
// openGNMI dials a switch's gNMI endpoint before any fault and fails the
// test unless the connection stays open; the test closes it at its end.
func openGNMI(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if !open(c, 200*time.Millisecond) {
		t.Fatal("a fresh gNMI connection was closed before any fault")
	}
	return c
}

func open(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout():
			return true
		default:
			return false
		}
	}
}

// Unknown devices, kinds and a host asked for a switch's fault are
// refused with what there is; the control socket applies a request and
// is reachable only by its user (0600).
func TestControlSocket(t *testing.T) {
	t.Parallel()
	l, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{Seed: 1}, sshdrv.Config{Retries: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := emulator.ControlPath(l.Dir())
	if err := l.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("control socket mode %v (%v), want 0600", fi.Mode(), err)
	}
	for _, tc := range []struct {
		req  emulator.FaultRequest
		want []string
	}{
		{emulator.FaultRequest{Device: "h9", Kind: "drop-ssh", For: time.Second}, []string{`no device "h9"`, "leaf1", "h1, h2"}},
		{emulator.FaultRequest{Device: "h1", Kind: "explode"}, []string{`unknown fault kind "explode"`, "drop-gnmi", "fail-commit"}},
		{emulator.FaultRequest{Device: "h1", Kind: "drop-gnmi", For: time.Second}, []string{"h1 is a host", "for switches"}},
		{emulator.FaultRequest{Device: "h1", Kind: "drop-ssh"}, []string{"drop-ssh needs a positive duration"}},
		{emulator.FaultRequest{Device: "h1", Kind: "delay-ssh", For: time.Second}, []string{"needs a positive --delay"}},
		{emulator.FaultRequest{Device: "h1", Kind: "garble-gnmi", For: time.Second}, []string{"h1 is a host", "for switches"}},
		{emulator.FaultRequest{Device: "leaf1", Kind: "garble-gnmi"}, []string{"garble-gnmi needs a positive duration"}},
	} {
		if _, err := emulator.SendFault(ctx, path, tc.req); err == nil || !containsAll(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
	msg, err := emulator.SendFault(ctx, path, emulator.FaultRequest{Device: "h1", Kind: "fail-ssh-command"})
	if err != nil || !strings.Contains(msg, "h1: the next ssh-command fails") {
		t.Fatalf("fail-ssh-command: %q %v", msg, err)
	}
	res, err := pool.Exec(ctx, testlab.Target(t, inv, "h1", sshdrv.EndpointSSH), "hostname")
	if err != nil || res.ExitStatus != 1 || !strings.Contains(string(res.Stderr), "injected failure") {
		t.Errorf("the armed failure did not happen: %v %+v", err, res)
	}
	// what garbling does to the samples: TestGarbledPFCCounter, TestGarbledCountersDuringARun
	if msg, err := emulator.SendFault(ctx, path, emulator.FaultRequest{Device: "leaf1", Kind: "garble-gnmi", For: time.Second}); err != nil ||
		!strings.Contains(msg, "leaf1: a PFC counter reads N/A until") {
		t.Errorf("garble-gnmi: %q %v", msg, err)
	}
	cancel()
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s stays after the lab's control ends", filepath.Base(path))
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A gNMI restart through the fault command ends live connections, serves
// again on the same address, and keeps the endpoint behind its gate: a
// drop after the restart still closes new connections.
func TestGNMIRestartStaysBehindTheGate(t *testing.T) {
	t.Parallel()
	l, inv, _ := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{Seed: 1},
		sshdrv.Config{DialTimeout: 5 * time.Second, Retries: -1})
	ctx := context.Background()
	sw := inv.Switches[0]
	live := openGNMI(t, sw.Mgmt.GNMI)
	if _, err := l.Inject(ctx, emulator.FaultRequest{Device: sw.Name, Kind: "gnmi-restart", For: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if open(live, time.Second) {
		t.Error("a gNMI connection survived the restart")
	}
	after, err := net.Dial("tcp", sw.Mgmt.GNMI)
	if err != nil {
		t.Fatalf("not serving on %s after the restart: %v", sw.Mgmt.GNMI, err)
	}
	defer after.Close()
	if !open(after, 300*time.Millisecond) {
		t.Fatal("a new gNMI connection was closed after the restart")
	}
	if _, err := l.DropEndpoint(sw.Name, emulator.EndpointGNMI, 800*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if open(after, time.Second) {
		t.Error("the drop after a restart left a live connection open: the restarted listener bypasses the gate")
	}
	if _, err := l.Inject(ctx, emulator.FaultRequest{Device: inv.Hosts[0].Name, Kind: "gnmi-restart"}); err == nil {
		t.Error("gnmi-restart on a host was accepted")
	}
}
