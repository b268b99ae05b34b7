package netconf_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

const ecn = `<qos xmlns="http://openconfig.net/yang/qos"><queue-management-profiles><queue-management-profile>` +
	`<name>ROCE_ECN</name><wred><uniform><config><min-threshold>%s</min-threshold><max-threshold>400000</max-threshold>` +
	`<enable-ecn>true</enable-ecn></config></uniform></wred></queue-management-profile></queue-management-profiles></qos>`

func cfg(min string) string { return strings.Replace(ecn, "%s", min, 1) }

func dial(t *testing.T) (*netconf.Session, *emulator.Lab) {
	t.Helper()
	src, _ := inventory.Generate("leafspine:1x1:1@100")
	l, err := emulator.Start(context.Background(), src, emulator.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	t.Cleanup(func() { pool.Close() })
	sw, _ := inv.Switch("leaf1")
	cred, _ := inv.CredentialFor("leaf1")
	s, err := netconf.Dial(context.Background(), pool, sshdrv.Target{Name: "leaf1", Addr: sw.Mgmt.SSH, Cred: cred}, sw.Mgmt.NETCONF)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
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
	if err := s.Apply(cfg("100000"), time.Minute, has("100000")); err != nil {
		t.Fatal(err)
	}
	run, _ := s.GetConfig("running")
	if !strings.Contains(run, "ROCE_ECN") || !strings.Contains(run, "<min-threshold>100000</min-threshold>") {
		t.Fatalf("running: %s", run)
	}
	// a change of one threshold merges into the existing profile
	if err := s.Apply(cfg("150000"), time.Minute, has("150000")); err != nil {
		t.Fatal(err)
	}
}

func TestFailuresLeaveThePreviousConfig(t *testing.T) {
	s, l := dial(t)
	if err := s.Apply(cfg("100000"), time.Minute, has("100000")); err != nil {
		t.Fatal(err)
	}
	before, _ := s.GetConfig("running")
	var ne *netconf.Error

	err := s.Apply(cfg("900000"), time.Minute, nil) // min above max: the model refuses
	if !errors.As(err, &ne) || ne.Device != "leaf1" || ne.Tag != "invalid-value" || !strings.Contains(ne.Message, "exceeds max-threshold") {
		t.Fatalf("model violation: %v", err)
	}
	l.FailNext("leaf1", emulator.FaultCommit)
	err = s.Apply(cfg("120000"), time.Minute, nil)
	if !errors.As(err, &ne) || ne.Operation != "commit" || ne.Tag != "operation-failed" {
		t.Fatalf("injected commit failure: %v", err)
	}
	// the read-back disagrees: the confirmed commit is cancelled
	err = s.Apply(cfg("130000"), time.Minute, func(string) error { return errors.New("not what we sent") })
	if err == nil || !strings.Contains(err.Error(), "read-back") {
		t.Fatalf("read-back failure: %v", err)
	}
	after, _ := s.GetConfig("running")
	if after != before {
		t.Fatalf("running changed after failures:\n%s\n%s", before, after)
	}
	if cand, _ := s.GetConfig("candidate"); cand != before {
		t.Fatalf("candidate not discarded: %s", cand)
	}
	if err := s.Apply(cfg("110000"), time.Minute, has("110000")); err != nil {
		t.Fatalf("the lock must have been released: %v", err)
	}
}
