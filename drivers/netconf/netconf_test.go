package netconf_test

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
)

const ecn = `<qos xmlns="http://openconfig.net/yang/qos"><queue-management-profiles><queue-management-profile>` +
	`<name>ROCE_ECN</name><wred><uniform><config><min-threshold>%s</min-threshold><max-threshold>400000</max-threshold>` +
	`<enable-ecn>true</enable-ecn></config></uniform></wred></queue-management-profile></queue-management-profiles></qos>`

func cfg(min string) string { return strings.Replace(ecn, "%s", min, 1) }

func dial(t *testing.T) (*netconf.Session, *emulator.Lab) {
	t.Helper()
	l, inv, pool := testlab.Start(t, "leafspine:1x1:1@100", nil, emulator.Options{}, sshdrv.Config{})
	s, err := netconf.Dial(context.Background(), pool, testlab.Target(t, inv, "leaf1", sshdrv.EndpointNETCONF))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
}

// apply is what a careful caller does: stage, read back, check, then
// confirm, or cancel if the check refuses.
func apply(s *netconf.Session, config string, check func(string) error) error {
	ctx := context.Background()
	if err := s.Stage(ctx, config, time.Minute); err != nil {
		return err
	}
	running, err := s.GetConfig(ctx, "running")
	if err == nil && check != nil {
		err = check(running)
	}
	if err != nil {
		return errors.Join(err, s.Cancel(ctx))
	}
	return s.Confirm(ctx)
}

func has(min string) func(string) error {
	return func(running string) error {
		if !strings.Contains(running, "<min-threshold>"+min+"</min-threshold>") {
			return errors.New("min-threshold " + min + " not in running config")
		}
		return nil
	}
}

func TestApplyCommitsAndReadsBack(t *testing.T) {
	s, _ := dial(t)
	if err := apply(s, cfg("100000"), has("100000")); err != nil {
		t.Fatal(err)
	}
	run, err := s.GetConfig(context.Background(), "running")
	if err != nil || !strings.Contains(run, "ROCE_ECN") || !strings.Contains(run, "<min-threshold>100000</min-threshold>") {
		t.Fatalf("running: %v %s", err, run)
	}
	// a change of one threshold merges into the existing profile
	if err := apply(s, cfg("150000"), has("150000")); err != nil {
		t.Fatal(err)
	}
}

func TestFailuresLeaveThePreviousConfig(t *testing.T) {
	s, l := dial(t)
	ctx := context.Background()
	if err := apply(s, cfg("100000"), has("100000")); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetConfig(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	var ne *netconf.Error

	err = apply(s, cfg("900000"), nil) // min above max: the model refuses
	if !errors.As(err, &ne) || ne.Device != "leaf1" || ne.Tag != "invalid-value" || !strings.Contains(ne.Message, "exceeds max-threshold") {
		t.Fatalf("model violation: %v", err)
	}
	if err := l.FailNext("leaf1", emulator.FaultCommit); err != nil {
		t.Fatal(err)
	}
	err = apply(s, cfg("120000"), nil)
	if !errors.As(err, &ne) || ne.Operation != "commit" || ne.Tag != "operation-failed" {
		t.Fatalf("injected commit failure: %v", err)
	}
	// the read-back disagrees: the confirmed commit is cancelled
	err = apply(s, cfg("130000"), func(string) error { return errors.New("not what we sent") })
	if err == nil || !strings.Contains(err.Error(), "not what we sent") {
		t.Fatalf("read-back failure: %v", err)
	}
	if after, err := s.GetConfig(ctx, "running"); err != nil || after != before {
		t.Fatalf("running changed after failures (%v):\n%s\n%s", err, before, after)
	}
	if cand, err := s.GetConfig(ctx, "candidate"); err != nil || cand != before {
		t.Fatalf("candidate not discarded (%v): %s", err, cand)
	}
	if err := apply(s, cfg("110000"), has("110000")); err != nil {
		t.Fatalf("the lock must have been released: %v", err)
	}
}

// mute is a device whose NETCONF subsystem says hello and then never
// answers, as a hung switch does.
func mute(t *testing.T) (*sshdrv.Pool, sshdrv.Target) {
	t.Helper()
	dir := t.TempDir()
	keyPath, pub, err := sshd.GenerateClientKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := sshd.GenerateHostKey()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sshd.New(sshd.Config{Name: "sw1", HostKey: hk, AuthorizedKeys: []ssh.PublicKey{pub},
		Subsystems: map[string]sshd.SubsystemHandler{"netconf": func(ctx context.Context, rw io.ReadWriter) error {
			_, err := io.WriteString(rw, `<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>`+
				`<capability>urn:ietf:params:netconf:base:1.0</capability></capabilities><session-id>1</session-id></hello>]]>]]>`)
			if err == nil {
				_, err = io.Copy(io.Discard, rw) // reads every request, answers none
			}
			return err
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	kh := filepath.Join(dir, "known_hosts")
	if err := sshd.WriteKnownHosts(kh, []sshd.KnownHost{{Addr: srv.Addr(), Key: hk.PublicKey()}}); err != nil {
		t.Fatal(err)
	}
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: kh})
	t.Cleanup(func() { pool.Close() })
	return pool, sshdrv.Target{Name: "sw1", Addr: srv.Addr(), Cred: inventory.Credential{User: "lab", KeyFile: keyPath}}
}

// A switch that stops answering cannot hold a caller past its context.
func TestCallsEndWithTheirContext(t *testing.T) {
	pool, tg := mute(t)
	for name, call := range map[string]func(ctx context.Context, s *netconf.Session) error{
		"get-config": func(ctx context.Context, s *netconf.Session) error { _, err := s.GetConfig(ctx, "running"); return err },
		"stage":      func(ctx context.Context, s *netconf.Session) error { return s.Stage(ctx, cfg("1"), time.Minute) },
	} {
		s, err := netconf.Dial(context.Background(), pool, tg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- call(ctx, s) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "device sw1") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a mute switch did not end with its context", name)
		}
		cancel()
	}
}

// A dial that ends with its context leaves no connection behind.
func TestDialLeavesNothingOpen(t *testing.T) {
	pool, tg := mute(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never speaks SSH
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c) // returns when the client closes
		close(closed)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	tg.Addr = ln.Addr().String()
	if _, err := netconf.Dial(ctx, pool, tg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection of a cancelled dial stays open")
	}
}

// A persistent stage survives its session: a new session confirms it by
// its token, or cancels it; a second confirm of the same token is an
// rpc-error (nothing pending), the answer a retry after a lost reply sees.
func TestStagePersistentOutlivesTheSession(t *testing.T) {
	_, inv, pool := testlab.Start(t, "leafspine:1x1:1@100", nil, emulator.Options{}, sshdrv.Config{})
	ctx := context.Background()
	open := func() *netconf.Session {
		s, err := netconf.Dial(ctx, pool, testlab.Target(t, inv, "leaf1", sshdrv.EndpointNETCONF))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	running := func(s *netconf.Session) string {
		r, err := s.GetConfig(ctx, "running")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// afterClose retries op while the switch answers in-use: a closed
	// session's lock is released once the switch has ended that session,
	// a moment after Close returns here (provision waits for it the same
	// way, by taking the lock).
	afterClose := func(op func() error) error {
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := op()
			var ne *netconf.Error
			if !errors.As(err, &ne) || ne.Tag != "in-use" || time.Now().After(end) {
				return err
			}
		}
	}
	a := open()
	if err := a.StagePersistent(ctx, cfg("12345"), time.Minute, "tok<1>"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := open()
	if err := has("12345")(running(b)); err != nil {
		t.Fatalf("the stage was undone when its session closed: %v", err)
	}
	if err := afterClose(func() error { return b.ConfirmPersistent(ctx, "tok<1>") }); err != nil {
		t.Fatal(err)
	}
	var ne *netconf.Error
	if err := b.ConfirmPersistent(ctx, "tok<1>"); !errors.As(err, &ne) || ne.Tag != "invalid-value" {
		t.Fatalf("a second confirm: %v", err)
	}

	if err := b.StagePersistent(ctx, cfg("23456"), time.Minute, "tok-2"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	c := open()
	if err := afterClose(func() error { return c.CancelPersistent(ctx, "tok-2") }); err != nil {
		t.Fatal(err)
	}
	if err := has("12345")(running(c)); err != nil {
		t.Fatalf("cancel from a new session: %v", err)
	}
	if err := c.StagePersistent(ctx, cfg("1"), time.Minute, ""); err == nil {
		t.Fatal("an empty token must be refused")
	}
}
