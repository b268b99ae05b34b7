package tofino_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
)

// The driver against an emulated lab: real SSH, SFTP and commands on every
// switch, bf_switchd emulated behind them.

type rig struct {
	inv  *inventory.Lab
	pool *sshdrv.Pool
	lab  *emulator.Lab
	drv  *tofino.Driver
	ts   []sshdrv.Target
}

func newRig(t *testing.T, spec string) *rig {
	t.Helper()
	l, inv, pool := testlab.Start(t, spec, nil, emulator.Options{Seed: 1, Engine: "packet"}, sshdrv.Config{})
	ts, err := tofino.Targets(inv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{inv: inv, pool: pool, lab: l, drv: tofino.NewDriver(pool, inv), ts: ts}
}

func bundle(t *testing.T, version, scheme string, params map[string]string, salt string) *tofino.Bundle {
	t.Helper()
	dir := t.TempDir()
	if _, err := tofino.WriteBundle(dir, tofino.BundleSpec{Name: "lb", Version: version, Program: "lb_" + scheme,
		LB: tofino.LB{Scheme: scheme, Params: params}, Salt: salt}); err != nil {
		t.Fatal(err)
	}
	b, err := tofino.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func outcomes(rs []tofino.Result) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		m[r.Switch] = r.Outcome
	}
	return m
}

func all(rs []tofino.Result, outcome string) bool {
	for _, r := range rs {
		if r.Outcome != outcome {
			return false
		}
	}
	return len(rs) > 0
}

func (r *rig) status(t *testing.T) map[string]tofino.Status {
	t.Helper()
	ss, err := r.drv.Status(context.Background(), r.ts, nil)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	m := map[string]tofino.Status{}
	for _, s := range ss {
		m[s.Switch] = s
	}
	return m
}

// bfSwitchds counts the bf_switchd processes on a switch.
func (r *rig) bfSwitchds(t *testing.T, sw string) int {
	t.Helper()
	return len(strings.Fields(r.pids(t, sw)))
}

// pids lists the bf_switchd processes on a switch.
func (r *rig) pids(t *testing.T, sw string) string {
	t.Helper()
	return string(r.exec(t, sw, "pgrep -f bin/bf_switchd").Stdout)
}

// exec runs cmd on switch sw.
func (r *rig) exec(t *testing.T, sw, cmd string) *sshdrv.Result {
	t.Helper()
	res, err := r.pool.Exec(context.Background(), r.target(t, sw), cmd)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (r *rig) target(t *testing.T, sw string) sshdrv.Target {
	t.Helper()
	for _, tg := range r.ts {
		if tg.Name == sw {
			return tg
		}
	}
	t.Fatalf("no switch %s", sw)
	return sshdrv.Target{}
}

func TestPushActivateStatusRollback(t *testing.T) {
	r := newRig(t, "leafspine:1x2:2")
	ctx := context.Background()
	v1 := bundle(t, "1", "ecmp", nil, "one")
	v2 := bundle(t, "2", "drill", map[string]string{"d": "2", "m": "1"}, "two")

	if rs, err := r.drv.Push(ctx, r.ts, v1, nil); err != nil || !all(rs, tofino.Pushed) || len(rs) != 3 {
		t.Fatalf("push v1: %v %+v", err, rs)
	}
	if rs, err := r.drv.Push(ctx, r.ts, v1, nil); err != nil || !all(rs, tofino.Present) {
		t.Fatalf("pushing the same image again: %v %+v", err, rs)
	}
	other := bundle(t, "1", "ecmp", nil, "other content")
	rs, err := r.drv.Push(ctx, r.ts, other, nil)
	if err == nil || !all(rs, tofino.Failed) || !strings.Contains(rs[0].Error, "immutable") || !strings.Contains(rs[0].Error, "device "+rs[0].Switch) {
		t.Fatalf("a second lb@1 with other content must be refused: %v %+v", err, rs)
	}

	progress := 0
	if rs, err := r.drv.Activate(ctx, r.ts, "lb@1", func(string, int, int) { progress++ }); err != nil || !all(rs, tofino.Activated) || progress != 3 {
		t.Fatalf("activate v1: %v %+v (%d progress calls)", err, rs, progress)
	}
	if scheme, _ := r.lab.FabricLB(); scheme != "ecmp" {
		t.Errorf("twin LB after v1: %q", scheme)
	}
	if rs, err := r.drv.Activate(ctx, r.ts, "lb@1", nil); err != nil || !all(rs, tofino.Unchanged) {
		t.Fatalf("activating the active image again: %v %+v", err, rs)
	}
	if _, err := r.drv.Push(ctx, r.ts, v2, nil); err != nil {
		t.Fatal(err)
	}
	if rs, err := r.drv.Activate(ctx, r.ts, "lb@2", nil); err != nil || !all(rs, tofino.Activated) {
		t.Fatalf("activate v2: %v %+v", err, rs)
	}
	for sw, s := range r.status(t) {
		if s.Active != "lb@2" || s.Previous != "lb@1" || !s.Healthy || !s.Health.Loaded || s.Health.Program != "lb_drill" {
			t.Errorf("%s after v2: %+v %+v", sw, s, s.Health)
		}
		if n := r.bfSwitchds(t, sw); n != 1 {
			t.Errorf("%s runs %d bf_switchd", sw, n)
		}
	}
	if scheme, params := r.lab.FabricLB(); scheme != "drill" || !maps.Equal(params, map[string]string{"d": "2", "m": "1"}) {
		t.Errorf("twin LB after v2: %q %v", scheme, params)
	}

	// explicit rollback: v1 again, v2 its previous
	if rs, err := r.drv.Rollback(ctx, r.ts, nil); err != nil || !all(rs, tofino.Activated) || rs[0].Image != "lb@1" {
		t.Fatalf("rollback: %v %+v", err, rs)
	}
	for sw, s := range r.status(t) {
		if s.Active != "lb@1" || s.Previous != "lb@2" || !s.Healthy || s.Last.Action != "rollback" {
			t.Errorf("%s after rollback: %+v", sw, s)
		}
	}
	if scheme, _ := r.lab.FabricLB(); scheme != "ecmp" {
		t.Errorf("twin LB after rollback: %q", scheme)
	}
	rs, err = r.drv.Activate(ctx, r.ts, "lb@9", nil)
	if err == nil || !strings.Contains(err.Error(), "lb@9 is not on the switch") || !errors.Is(err, tofino.ErrNotPushed) || rs[0].Restarted {
		t.Errorf("activating an image never pushed: %v %+v", err, rs)
	}
	for sw, s := range r.status(t) {
		if s.Active != "lb@1" || s.Last == nil || s.Last.Action != "rollback" || s.Last.Image != "lb@1" {
			t.Errorf("%s: activating an image never pushed changed the state file: %+v %+v", sw, s, s.Last)
		}
	}
}

// TestFailedStartRollsBack: a switch whose new image never loads goes back
// to its previous image and says so; the others keep the new one.
func TestFailedStartRollsBack(t *testing.T) {
	r := newRig(t, "leafspine:1x2:2")
	ctx := context.Background()
	for _, b := range []*tofino.Bundle{bundle(t, "1", "ecmp", nil, "one"), bundle(t, "2", "drill", nil, "two")} {
		if _, err := r.drv.Push(ctx, r.ts, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.drv.Activate(ctx, r.ts, "lb@1", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.lab.FailNext("leaf1", emulator.FaultImageStart); err != nil {
		t.Fatal(err)
	}
	rs, err := r.drv.Activate(ctx, r.ts, "lb@2", nil)
	want := map[string]string{"leaf1": tofino.RolledBack, "leaf2": tofino.Activated, "spine1": tofino.Activated}
	if err == nil || !maps.Equal(outcomes(rs), want) {
		t.Fatalf("activate with a failing start on leaf1: %v %+v", err, rs)
	}
	for _, res := range rs {
		if res.Switch == "leaf1" && (!strings.Contains(res.Error, "device leaf1") || !strings.Contains(res.Error, "initialized 0 devices") ||
			!strings.Contains(res.Error, "cat /opt/labctl/run/bf_switchd.log") || !strings.Contains(res.Rollback, "lb@1 is active again")) {
			t.Errorf("leaf1's result must name the device, the command and its answer, and the rollback: %+v", res)
		}
	}
	if !strings.Contains(err.Error(), "rollback: lb@1 is active again") {
		t.Errorf("the error must report the rollback too: %v", err)
	}
	st := r.status(t)
	if s := st["leaf1"]; s.Active != "lb@1" || s.Previous != "" || !s.Healthy || s.Last == nil || s.Last.Image != "lb@2" ||
		s.Last.Outcome != tofino.RolledBack || !strings.Contains(s.Last.Error, "initialized 0 devices") {
		t.Errorf("leaf1 status: %+v last %+v", s, s.Last)
	}
	if s := st["spine1"]; s.Active != "lb@2" || s.Previous != "lb@1" || !s.Healthy {
		t.Errorf("spine1 status: %+v", s)
	}
	if n := r.bfSwitchds(t, "leaf1"); n != 1 {
		t.Errorf("leaf1 runs %d bf_switchd after the rollback", n)
	}
	// in the twin each switch forwards with the scheme of its own image
	for sw, want := range map[string]string{"leaf1": "ecmp", "leaf2": "drill", "spine1": "drill"} {
		if got, _ := r.lab.SwitchLB(sw); got != want {
			t.Errorf("twin LB of %s after the partial rollback: %q, want %q", sw, got, want)
		}
	}
	if scheme, _ := r.lab.FabricLB(); scheme != "mixed" {
		t.Errorf("twin LB of the fabric after a partial rollback: %q, want mixed", scheme)
	}

	// a first activation that fails has nothing to go back to: nothing is
	// left running
	r2 := newRig(t, "leafspine:1x1:1")
	b := bundle(t, "1", "ecmp", nil, "one")
	if _, err := r2.drv.Push(ctx, r2.ts, b, nil); err != nil {
		t.Fatal(err)
	}
	r2.lab.FailNext("spine1", emulator.FaultImageStart)
	rs, err = r2.drv.Activate(ctx, r2.ts, "lb@1", nil)
	if err == nil || outcomes(rs)["spine1"] != tofino.Failed || outcomes(rs)["leaf1"] != tofino.Activated {
		t.Fatalf("%v %+v", err, rs)
	}
	if s := r2.status(t)["spine1"]; s.Active != "" || s.Last.Outcome != tofino.Failed || r2.bfSwitchds(t, "spine1") != 0 {
		t.Errorf("spine1 after a failed first activation: %+v, %d bf_switchd", s, r2.bfSwitchds(t, "spine1"))
	}
}

func TestSSHCommandFaultNamesTheDevice(t *testing.T) {
	r := newRig(t, "leafspine:1x1:1")
	ctx := context.Background()
	if err := r.lab.FailNext("leaf1", emulator.FaultSSHCommand); err != nil {
		t.Fatal(err)
	}
	rs, err := r.drv.Push(ctx, r.ts, bundle(t, "1", "ecmp", nil, "x"), nil)
	var ce *sshdrv.CommandError
	if !errors.As(err, &ce) || ce.Device != "leaf1" || !strings.HasPrefix(ce.Command, "rm -rf") ||
		!strings.Contains(ce.Message, "injected failure") || outcomes(rs)["spine1"] != tofino.Pushed {
		t.Fatalf("push with a failing command on leaf1: %v %+v", err, rs)
	}
	if !strings.Contains(err.Error(), `device leaf1: command "rm -rf /opt/labctl/images/lb/.1.partial": exit 1: leaf1: rm: injected failure`) {
		t.Errorf("error: %v", err)
	}
	// the fault fires once: the next push completes
	if rs, err := r.drv.Push(ctx, r.ts, bundle(t, "1", "ecmp", nil, "x"), nil); err != nil || outcomes(rs)["leaf1"] != tofino.Pushed {
		t.Fatalf("%v %+v", err, rs)
	}
	for _, tc := range []struct {
		dev string
		f   emulator.Fault
	}{{"nosuch", emulator.FaultSSHCommand}, {"h1", emulator.FaultImageStart}, {"h1", emulator.FaultCommit}} {
		if err := r.lab.FailNext(tc.dev, tc.f); err == nil {
			t.Errorf("FailNext(%s, %v) accepted", tc.dev, tc.f)
		}
	}
	if err := r.lab.FailNext("h1", emulator.FaultSSHCommand); err != nil {
		t.Errorf("hosts take ssh-command faults: %v", err)
	}
}

// TestTamperedImageIsNotActivated: a file changed on the switch after the
// push is found by sha256sum on the switch, and nothing is changed: the
// bf_switchd the switch booted with runs on, and the state file records
// nothing.
func TestTamperedImageIsNotActivated(t *testing.T) {
	r := newRig(t, "leafspine:1x1:1")
	ctx := context.Background()
	if _, err := r.drv.Push(ctx, r.ts, bundle(t, "1", "ecmp", nil, "x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.pool.WriteFile(ctx, r.ts[0], "/opt/labctl/images/lb/1/pipe/tofino.bin", []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := r.pids(t, r.ts[0].Name)
	rs, err := r.drv.Activate(ctx, r.ts, "lb@1", nil)
	res := rs[0]
	if err == nil || res.Outcome != tofino.Failed || !strings.Contains(res.Error, "device "+res.Switch+`: command "sha256sum `) ||
		!strings.Contains(res.Error, "pipe/tofino.bin has sha256 ") || res.Rollback != "not needed: nothing was changed" || res.Restarted {
		t.Fatalf("%v %+v", err, res)
	}
	if after := r.pids(t, res.Switch); after != before || before == "" {
		t.Errorf("bf_switchd %q before, %q after a refused activation", before, after)
	}
	if s := r.status(t)[res.Switch]; s.Active != "" || s.Last != nil {
		t.Errorf("a refused activation was recorded: %+v %+v", s, s.Last)
	}
}

// BenchmarkActivate: switching 12 emulated switches between two images
// (stop, state file, start, health), over real SSH.
func BenchmarkActivate(b *testing.B) {
	src, err := inventory.Generate("leafspine:4x8:1")
	if err != nil {
		b.Fatal(err)
	}
	l, err := emulator.Start(context.Background(), src, emulator.Options{Dir: b.TempDir(), Engine: "packet"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	inv := l.Inventory()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	defer pool.Close()
	d := tofino.NewDriver(pool, inv)
	ts, _ := tofino.Targets(inv, nil)
	ctx := context.Background()
	for i, scheme := range []string{"ecmp", "drill"} {
		dir := b.TempDir()
		if _, err := tofino.WriteBundle(dir, tofino.BundleSpec{Name: "lb", Version: string(rune('1' + i)), Program: "lb_" + scheme,
			LB: tofino.LB{Scheme: scheme}}); err != nil {
			b.Fatal(err)
		}
		bu, err := tofino.OpenBundle(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Push(ctx, ts, bu, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Activate(ctx, ts, []string{"lb@1", "lb@2"}[i%2], nil); err != nil {
			b.Fatal(err)
		}
	}
}

// An image whose program loads but whose ports stay down is not healthy:
// the activation fails on that switch, names the port count, and the
// previous image comes back with its ports up.
func TestPortsDownRollsBack(t *testing.T) {
	r := newRig(t, "leafspine:1x2:2")
	ctx := context.Background()
	for _, b := range []*tofino.Bundle{bundle(t, "1", "ecmp", nil, "one"), bundle(t, "2", "drill", nil, "two")} {
		if _, err := r.drv.Push(ctx, r.ts, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.drv.Activate(ctx, r.ts, "lb@1", nil); err != nil {
		t.Fatal(err)
	}
	st := r.status(t)
	sw, _ := r.inv.Switch("leaf2")
	if h := st["leaf2"].Health; h == nil || h.Ports != len(sw.Ports) || h.PortsUp != h.Ports {
		t.Fatalf("leaf2 after activation: %+v (want all %d ports up)", h, len(sw.Ports))
	}
	if err := r.lab.FailNext("leaf2", emulator.FaultPortsDown); err != nil {
		t.Fatal(err)
	}
	rs, err := r.drv.Activate(ctx, r.ts, "lb@2", nil)
	want := map[string]string{"leaf1": tofino.Activated, "leaf2": tofino.RolledBack, "spine1": tofino.Activated}
	if err == nil || !maps.Equal(outcomes(rs), want) {
		t.Fatalf("activate with leaf2's ports down: %v %+v", err, rs)
	}
	for _, res := range rs {
		if res.Switch == "leaf2" && (!strings.Contains(res.Error, fmt.Sprintf("0 of %d ports up", len(sw.Ports))) || !strings.Contains(res.Rollback, "lb@1 is active again")) {
			t.Errorf("leaf2's result must say how many ports are up, and the rollback: %+v", res)
		}
	}
	if s := r.status(t)["leaf2"]; s.Active != "lb@1" || !s.Healthy || s.Health.PortsUp != len(sw.Ports) {
		t.Errorf("leaf2 after the rollback: %+v %+v", s, s.Health)
	}
}

func TestParsePortsUp(t *testing.T) {
	out := "noise\nlabctl-tm portup 1/0 True\nlabctl-tm portup 2/0 False\n"
	if up, err := tofino.ParsePortsUp(out, []string{"1/0", "2/0"}); err != nil || up != 1 {
		t.Errorf("up %d err %v", up, err)
	}
	if _, err := tofino.ParsePortsUp(out, []string{"1/0", "3/0"}); err == nil || !strings.Contains(err.Error(), "3/0") {
		t.Errorf("a port without its line: %v", err)
	}
	if _, err := tofino.ParsePortsUp("labctl-tm portup 1/0 maybe\n", []string{"1/0"}); err == nil {
		t.Error("a bad state was accepted")
	}
}
