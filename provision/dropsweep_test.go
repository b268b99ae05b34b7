package provision_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testwatch"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// cutter is a TCP relay in front of one device endpoint that can cut every
// connection through it at once: a session drop as the network makes one
// (both ends see their peer vanish; new connections still get through).
type cutter struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newCutter(tb testing.TB, target string) *cutter {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c := &cutter{ln: ln, target: target}
	tb.Cleanup(func() { ln.Close(); c.cut() })
	go c.serve()
	return c
}

func (c *cutter) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			in.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, in, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// cut closes every connection through the relay.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.conns {
		k.Close()
	}
	c.conns = nil
}

// sweepLab is an emulated lab whose switches labctl reaches only through
// cutters (NETCONF, or SSH for SDE switches), with a pool that trusts the
// relays' addresses.
type sweepLab struct {
	inv  *inventory.Lab
	pool *sshdrv.Pool
	cuts []*cutter
}

func newSweepLab(t *testing.T, spec string, edit func(*inventory.Lab)) *sweepLab {
	t.Helper()
	src, _, _ := emulatedWith(t, spec, edit, emulator.Options{}, sshdrv.Config{})
	inv := *src
	inv.Switches = slices.Clone(src.Switches)
	known, err := os.ReadFile(src.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	lines := string(known)
	sl := &sweepLab{}
	for i := range inv.Switches {
		m := &inv.Switches[i].Mgmt
		addr := &m.NETCONF
		if inv.Switches[i].QoSDriver == provision.DriverSDE {
			addr = &m.SSH
		}
		c := newCutter(t, *addr)
		// the relay presents the device's host key under its own address
		for _, l := range strings.Split(string(known), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == knownhosts.Normalize(*addr) {
				lines += knownhosts.Normalize(c.ln.Addr().String()) + " " + f[1] + " " + f[2] + "\n"
			}
		}
		*addr = c.ln.Addr().String()
		sl.cuts = append(sl.cuts, c)
	}
	inv.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(inv.KnownHosts, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	sl.inv = &inv
	sl.pool = sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	t.Cleanup(func() { sl.pool.Close() })
	return sl
}

// cut drops the sessions of switch i, or of every switch if i is past the
// last one.
func (sl *sweepLab) cut(i int) {
	if i < len(sl.cuts) {
		sl.cuts[i].cut()
		return
	}
	for _, c := range sl.cuts {
		c.cut()
	}
}

// readAll reads every switch, with an error instead of failing the test:
// it runs on the sweep's goroutines.
func (sl *sweepLab) readAll() (map[string]any, error) {
	out := map[string]any{}
	for _, sw := range sl.inv.Switches {
		c, err := provision.ReadSwitch(context.Background(), sl.pool, sl.inv, sw.Name)
		if err != nil {
			return nil, err
		}
		out[sw.Name] = c
	}
	return out, nil
}

func (sl *sweepLab) apply(t *testing.T, p *provision.QoSProfile, atomic bool) ([]provision.SwitchResult, error) {
	t.Helper()
	return provision.ApplySwitches(context.Background(), sl.pool, sl.inv, p, atomic, nil)
}

// pendingCommit is the rpc-error a NETCONF switch answers to a plain
// commit while a persistent confirmed commit waits for its token: a staged
// change that the switch would undo later, by itself.
func (sl *sweepLab) pendingCommits() []string {
	var pending []string
	for _, sw := range sl.inv.Switches {
		if sw.QoSDriver == provision.DriverSDE {
			continue
		}
		if err := provision.CommitNothing(context.Background(), sl.pool, sl.inv, sw.Name); err != nil {
			pending = append(pending, fmt.Sprintf("%s: %v", sw.Name, err))
		}
	}
	return pending
}

// TestApplyDropSweep drops the switches' sessions at every millisecond of
// an apply (one switch's in turn, or all at once) and checks where each
// timing ends: with --atomic, every switch on the new profile or every one
// on the old; without, each switch on one of the two, and its result
// saying which. Nothing may be left staged for a switch to undo later.
func TestApplyDropSweep(t *testing.T) {
	t.Parallel()
	for _, atomic := range []bool{true, false} {
		t.Run(fmt.Sprintf("atomic=%t", atomic), func(t *testing.T) {
			t.Parallel()
			dropSweep(t, atomic)
		})
	}
}

// maxTimings bounds a sweep on a slow machine: past it the offsets are
// spread over the apply at a coarser step (and the log says which); -short
// takes fewer.
func maxTimings() time.Duration {
	if testing.Short() {
		return 30
	}
	return 150
}

func dropSweep(t *testing.T, isAtomic bool) {
	workers := min(runtime.GOMAXPROCS(0), 4)
	labs := make([]*sweepLab, workers)
	for w := range labs {
		labs[w] = newSweepLab(t, "leafspine:2x2:2@100", sdeEvery(4, 1))
	}
	oldP, newP := fullProfile(100000), fullProfile(150000)
	states := make([][2]map[string]any, workers) // old, new per lab
	var span time.Duration
	for w, sl := range labs {
		if _, err := sl.apply(t, newP, true); err != nil {
			t.Fatal(err)
		}
		states[w][1] = readAll(t, sl.pool, sl.inv)
		start := time.Now()
		if _, err := sl.apply(t, oldP, true); err != nil {
			t.Fatal(err)
		}
		span = max(span, time.Since(start))
		states[w][0] = readAll(t, sl.pool, sl.inv)
	}
	last := span + span/4 + 5*time.Millisecond
	step := max(time.Millisecond, last/maxTimings())
	t.Logf("a clean apply takes %v: dropping sessions every %v from 0 to %v, on %d labs at once", span, step, last, workers)
	// On loopback a timing takes well under a second, even with redials; one
	// still running after this waits on a call that will not return.
	watch := testwatch.Stuck(90*time.Second, "provision_test.dropOnce", "labctl/provision.")
	var next atomic.Int64
	var wg sync.WaitGroup
	for w, sl := range labs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := next.Add(1) - 1; time.Duration(k)*step <= last; k = next.Add(1) - 1 {
				d, i := time.Duration(k)*step, int(k)%(len(sl.cuts)+1)
				stop := watch.Start(fmt.Sprintf("TestApplyDropSweep/atomic=%t: the drop at %v (switch %d)", isAtomic, d, i))
				ok := dropOnce(t, sl, states[w], d, i, isAtomic, oldP, newP)
				stop()
				if !ok {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// dropOnce applies newP over oldP with the sessions of switch i (all past
// the last) dropped d after the start, checks where the switches end, and
// puts oldP back. False if the lab could not be put back.
func dropOnce(t *testing.T, sl *sweepLab, state [2]map[string]any, d time.Duration, i int, atomic bool, oldP, newP *provision.QoSProfile) bool {
	which := func(name string, c any) string {
		switch {
		case reflect.DeepEqual(c, state[0][name]):
			return "old"
		case reflect.DeepEqual(c, state[1][name]):
			return "new"
		}
		return "neither"
	}
	cutDone := make(chan struct{})
	timer := time.AfterFunc(d, func() { sl.cut(i); close(cutDone) })
	rs, err := sl.apply(t, newP, atomic)
	if !timer.Stop() {
		<-cutDone // a late cut must not hit the reads below
	}
	got, rerr := sl.readAll()
	if rerr != nil {
		t.Errorf("drop at %v (switch %d): reading the switches back: %v", d, i, rerr)
		return false
	}
	ends := map[string]string{}
	for _, r := range rs {
		ends[r.Switch] = which(r.Switch, got[r.Switch])
		committed := r.Outcome == provision.Committed || r.Outcome == provision.Unchanged
		if ends[r.Switch] == "neither" || committed != (ends[r.Switch] == "new") {
			t.Errorf("drop at %v (switch %d): %s ends on the %s profile, result %s %s", d, i, r.Switch, ends[r.Switch], r.Outcome, r.Error)
		}
	}
	if atomic && len(slices.Compact(slices.Sorted(maps.Values(ends)))) != 1 {
		t.Errorf("drop at %v (switch %d): --atomic left the switches apart: %v (err %v)", d, i, ends, err)
	}
	if p := sl.pendingCommits(); len(p) > 0 {
		t.Errorf("drop at %v (switch %d): staged changes left for the switch to undo later: %v", d, i, p)
	}
	if _, err := sl.apply(t, oldP, false); err != nil {
		t.Errorf("back to the old profile after the drop at %v: %v", d, err)
		return false
	}
	return true
}
