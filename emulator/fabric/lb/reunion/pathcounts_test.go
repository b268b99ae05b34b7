package reunion

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestElephantsCountedOnTheLinksTheyTook: on the ring of elephants that
// collide under ECMP (TestCollidingElephantsSpreadOut, 4 MiB each), the
// module's per-link counts agree with a watcher of the packets (its
// windows are the intervals): it counts no more elephants on a link, in
// all or in one interval, than flows sent data on it; on every link a
// flow sent a quarter window's line-rate bytes over in an interval from
// the third on (by then every flow is an elephant) it counts at least as
// many in one interval as the watcher saw there, and in all at least the
// watcher's; and it saw the first intervals' collisions (some link with
// two or more).
func TestElephantsCountedOnTheLinksTheyTook(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:8x4:4@100", nil)
	fs := ring(4, 4, 4<<20)
	const win = 100_000
	m := newModule(t, map[string]string{"interval_us": "100"})
	w := &perLink{Module: m, win: win, bytes: map[[3]int64]int64{}}
	cfg := fabric.DefaultConfig()
	cfg.Seed = 1
	lbtest.Run(t, topo, cfg, w, nil, fs)

	got := map[int64]map[string]uint64{}
	for _, c := range m.LinkCounts(nil) {
		if got[int64(c.Link)] == nil {
			got[int64(c.Link)] = map[string]uint64{}
		}
		got[int64(c.Link)][c.Name] = c.Value
	}
	carried := map[int64]uint64{}                // link: (window, flow) pairs with any data
	any := map[[2]int64]uint64{}                 // window, link: flows with any data
	heavy := map[[2]int64]int{}                  // window, link: flows with a quarter window's bytes
	floor := int64(100.0 / 8 * float64(win) / 4) // 100 Gb/s
	for k, b := range w.bytes {
		carried[k[1]]++
		any[[2]int64{k[0], k[1]}]++
		if b >= floor && k[0] >= 2 {
			heavy[[2]int64{k[0], k[1]}]++
		}
	}
	anyMost := map[int64]uint64{}
	for k, n := range any {
		anyMost[k[1]] = max(anyMost[k[1]], n)
	}
	most := uint64(0)
	for l, c := range got {
		most = max(most, c[lb.CountElephantsMax])
		if c[lb.CountElephantIntervals] > carried[l] || c[lb.CountElephantsMax] > anyMost[l] {
			t.Errorf("link %d: %v, more than the flows that sent on it (%d flow-intervals, at most %d in one)", l, c, carried[l], anyMost[l])
		}
	}
	watched := map[int64]int{}
	for k, n := range heavy {
		l := k[1]
		watched[l] += n
		if c := got[l][lb.CountElephantsMax]; c < uint64(n) {
			t.Errorf("link %d, interval %d: %d elephants on it, the module's most is %d", l, k[0], n, c)
		}
	}
	for l, n := range watched {
		if c := got[l][lb.CountElephantIntervals]; c < uint64(n) {
			t.Errorf("link %d: the watcher saw %d elephant-intervals from the third interval, the module counts %d in all", l, n, c)
		}
	}
	if most < 2 || most > uint64(len(fs)) {
		t.Errorf("most elephants on a link in an interval: %d, want the first intervals' collisions (2 to %d)", most, len(fs))
	}
	if len(watched) == 0 {
		t.Fatal("the watcher saw no elephant: the test shows nothing")
	}
	t.Logf("%d links counted, most elephants on one %d; watcher: %d links", len(got), most, len(watched))
}

// TestPathElephantsRestart: a run's counts restart at 0 on every link
// counted before, so the engine sees the restart (lb.LinkCounting).
func TestPathElephantsRestart(t *testing.T) {
	t.Parallel()
	var c pathElephants
	c.add(4, 2, 0)
	c.add(4, 2, 0)
	c.add(4, 2, 1)
	if c.max[2] != 2 || c.intervals[2] != 3 {
		t.Fatalf("max %d, intervals %d; want 2, 3", c.max[2], c.intervals[2])
	}
	c.reset()
	m := &Module{paths: c}
	got := m.LinkCounts(nil)
	if len(got) != 2 || got[0].Link != 2 || got[0].Value != 0 || got[1].Value != 0 {
		t.Errorf("after a restart: %+v, want link 2 at 0", got)
	}
}
