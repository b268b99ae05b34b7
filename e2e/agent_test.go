package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
	"github.com/labctl/labctl/scenarios"
)

// stages records a run's progress stages.
type stages struct {
	mu  sync.Mutex
	got []string
}

func (s *stages) Stage(stage, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, stage+": "+detail)
}
func (s *stages) Point(scenarios.PointProgress) {}
func (s *stages) Flows(string, int, int)        {}

// agentCounts is the last "N hosts: P present, U uploaded" agent stage.
func (s *stages) agentCounts(t *testing.T) (present, uploaded int) {
	t.Helper()
	re := regexp.MustCompile(`^agent: \d+ hosts: (\d+) present, (\d+) uploaded$`)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.got) - 1; i >= 0; i-- {
		if m := re.FindStringSubmatch(s.got[i]); m != nil {
			fmt.Sscan(m[1], &present)
			fmt.Sscan(m[2], &uploaded)
			return present, uploaded
		}
	}
	t.Fatalf("no agent stage with counts in %q", s.got)
	return 0, 0
}

// TestAgentGoesToAHostOncePerVersion: on an emulated lab (whose hosts share
// one agent store, as hosts with an NFS home do) the first run uploads the
// agent once and finds it on every other host; a second run uploads
// nothing (the stored file is the same inode, untouched); a new version is
// uploaded once more beside the old. Every host's copy is checked over SSH.
func TestAgentGoesToAHostOncePerVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	_, inv, pool := testlab.Start(t, "leafspine:1x2:3@100", nil, emulator.Options{Seed: 1, Dir: dir}, sshdrv.Config{})
	s, err := scenarios.Parse([]byte("name: small\ntelemetry: {disabled: true}\ntraffic:\n  - {name: incast, pattern: incast, senders: 5, receiver: h1, bytes: 64KiB}\n"), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agentBin := fakeAgent(t)
	run := func(bin string) (present, uploaded int) {
		t.Helper()
		st := &stages{}
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: bin, Progress: st}
		if _, err := r.Run(ctx, s); err != nil {
			t.Fatal(err)
		}
		return st.agentCounts(t)
	}
	hosts := len(inv.Hosts)
	if p, u := run(agentBin); p != hosts-1 || u != 1 {
		t.Fatalf("first run: %d present, %d uploaded; want %d and 1", p, u, hosts-1)
	}
	sum, err := sshdrv.FileSHA256(agentBin)
	if err != nil {
		t.Fatal(err)
	}
	stored := filepath.Join(dir, "shared", filepath.FromSlash(agent.BinaryPath(sum)[len(agent.HomeDir)+1:]))
	before := inode(t, stored)
	for _, h := range inv.Hosts {
		res, err := pool.Exec(ctx, testlab.Target(t, inv, h.Name, sshdrv.EndpointSSH), "sha256sum "+agent.BinaryPath(sum))
		if err != nil || !strings.HasPrefix(string(res.Stdout), sum) {
			t.Errorf("%s: sha256sum of its agent: %q %v", h.Name, res.Stdout, err)
		}
	}
	if p, u := run(agentBin); p != hosts || u != 0 {
		t.Errorf("second run: %d present, %d uploaded; want %d and 0", p, u, hosts)
	}
	if after := inode(t, stored); after != before {
		t.Errorf("the stored agent was written again: %+v, was %+v", after, before)
	}
	newer := filepath.Join(t.TempDir(), "labctl-agent")
	if err := os.WriteFile(newer, []byte("#!/bin/sh\necho agent v2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, u := run(newer); p != hosts-1 || u != 1 {
		t.Errorf("new version: %d present, %d uploaded; want %d and 1", p, u, hosts-1)
	}
	if ents, _ := os.ReadDir(filepath.Dir(filepath.Dir(stored))); len(ents) != 2 {
		t.Errorf("the store holds %d versions, want 2", len(ents))
	}
	if fi, err := os.Stat(filepath.Join(dir, "devices", "h1", agent.HomeDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a host's %s: %v %v, want mode 0700", agent.HomeDir, fi.Mode(), err)
	}
}

type fileID struct {
	ino   uint64
	mtime int64
}

func inode(t *testing.T, p string) fileID {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fileID{fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime().UnixNano()}
}

// TestHostScheduleHoldsExactlyItsFlows: each host receives, over SFTP, the
// part of the point's schedule with exactly the flows it sends or
// receives, with the point's ID and epoch; the archive keeps the whole
// schedule once.
func TestHostScheduleHoldsExactlyItsFlows(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agentBin := emulatedLab(t, "leafspine:2x2:4@100")
	o := runYAML(ctx, t, inv, pool, agentBin, `name: parts
telemetry: {disabled: true}
traffic:
  - {name: ring, pattern: allreduce, hosts: 6, buffer: 1MiB}
`)
	var whole perftest.Schedule
	readJSON(t, filepath.Join(o.Dir, "raw", "ring", "schedule.json"), &whole)
	if len(whole.Flows) == 0 {
		t.Fatal("the archive's schedule has no flows")
	}
	entries := 0
	for _, h := range inv.Hosts {
		var want []int
		for _, f := range whole.Flows {
			if f.Src == h.Name || f.Dst == h.Name {
				want = append(want, f.ID)
			}
		}
		local := filepath.Join(t.TempDir(), "part.json")
		remote := agent.RunDir(o.RunID) + "/ring." + h.Name + ".schedule.json"
		err := pool.Download(ctx, testlab.Target(t, inv, h.Name, sshdrv.EndpointSSH), remote, local)
		if len(want) == 0 && errors.Is(err, fs.ErrNotExist) {
			continue // not in the ring: no part
		}
		if err != nil {
			t.Fatal(err)
		}
		var part perftest.Schedule
		readJSON(t, local, &part)
		var got []int
		for _, f := range part.Flows {
			got = append(got, f.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s's schedule holds flows %v, want %v", h.Name, got, want)
		}
		if part.ID != whole.ID || !part.Epoch.Equal(whole.Epoch) || part.Host != h.Name || part.PointFlows != len(whole.Flows) {
			t.Errorf("%s's schedule: id %q epoch %v host %q point flows %d; the point's: %q %v %d",
				h.Name, part.ID, part.Epoch, part.Host, part.PointFlows, whole.ID, whole.Epoch, len(whole.Flows))
		}
		entries += len(part.Flows)
	}
	// A ring's flows each go to their two ends: the hosts hold twice the
	// point's flows in all, not hosts x flows.
	if entries != 2*len(whole.Flows) {
		t.Errorf("hosts hold %d flow entries for a point of %d flows, want %d", entries, len(whole.Flows), 2*len(whole.Flows))
	}
}
