package reunion

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestElephantsCountedOnTheLinksTheyTook: on the ring of elephants that
// collide under ECMP (TestCollidingElephantsSpreadOut, 4 MiB each), the
// module's per-link counts agree with a watcher of the packets: it counts
// elephants only on links that carried data, on every link a flow sent a
// quarter window's line-rate bytes over in an interval from the third on
// (by then every flow is an elephant), at least as many per interval as
// the watcher saw there, and it saw the first intervals' collisions
// (some link with two or more).
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
	carried := map[int64]bool{}                  // links with any data
	heavy := map[[2]int64]int{}                  // window, link: flows with a quarter window's bytes
	floor := int64(100.0 / 8 * float64(win) / 4) // 100 Gb/s
	for k, b := range w.bytes {
		carried[k[1]] = true
		if b >= floor && k[0] >= 2 {
			heavy[[2]int64{k[0], k[1]}]++
		}
	}
	most := uint64(0)
	for l, c := range got {
		most = max(most, c[lb.CountElephantsMax])
		if c[lb.CountElephantIntervals] > 0 && !carried[l] {
			t.Errorf("link %d: %v elephants counted, but it carried no data", l, c)
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
