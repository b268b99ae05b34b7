package fabric

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// counting is a switch module that counts the data packets it chose for,
// restarting at each run unless lifelong.
type counting struct {
	lifelong bool
	n        uint64
}

func (c *counting) Select(sw lb.Switch, p *lb.Packet, cands []lb.Egress) int {
	if p.Kind == lb.Data {
		c.n++
	}
	return lb.ECMP(p.Hash, sw.Salt(), len(cands))
}

func (c *counting) Reset(lb.Switch) {
	if !c.lifelong {
		c.n = 0
	}
}

func (c *counting) Counts(dst []lb.Count) []lb.Count {
	return append(dst, lb.Count{Name: lb.CountDecisions, Value: c.n})
}

// hostCounting is a host module that counts the packets it saw.
type hostCounting struct{ n uint64 }

func (h *hostCounting) Send(hostlb.Host, *hostlb.Packet) int64 { h.n++; return 0 }
func (h *hostCounting) Reset(hostlb.Host)                      { h.n = 0 }
func (h *hostCounting) Counts(dst []lb.Count) []lb.Count {
	return append(dst, lb.Count{Name: lb.CountGapsNatural, Value: h.n})
}

func countOf(cs []lb.Count, name string) (uint64, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// TestSchemeCountersGrowOverRuns: a switch's published scheme counters
// are totals since the engine was made, whether its module restarts its
// count with each run or keeps it for life; host modules' counts are
// summed at the switch their hosts attach to; a module every switch
// shares is counted once.
func TestSchemeCountersGrowOverRuns(t *testing.T) {
	t.Parallel()
	flows := []Flow{{ID: 1, Src: "h1", Dst: "h3", Bytes: 64 << 10}, {ID: 2, Src: "h2", Dst: "h4", Bytes: 64 << 10}}
	for _, lifelong := range []bool{false, true} {
		topo := generated(t, "leafspine:2x2:2@100")
		e, err := NewPacketEngineLB(topo, DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf1 := &counting{lifelong: lifelong}
		if err := e.SetSwitchLB("leaf1", leaf1); err != nil {
			t.Fatal(err)
		}
		h1, h2 := &hostCounting{}, &hostCounting{}
		if err := e.SetHostLB("h1", h1); err != nil {
			t.Fatal(err)
		}
		if err := e.SetHostLB("h2", h2); err != nil {
			t.Fatal(err)
		}
		run(t, e, flows)
		first := e.Counters().Schemes
		perRun, hostsPerRun := leaf1.n, h1.n+h2.n
		if perRun == 0 || hostsPerRun == 0 {
			t.Fatalf("lifelong %v: the modules counted nothing (%d, %d)", lifelong, perRun, hostsPerRun)
		}
		run(t, e, flows)
		second := e.Counters().Schemes
		if len(first) != 1 || len(second) != 1 {
			t.Fatalf("lifelong %v: scheme counters of %d and %d switches, want leaf1's only: %v", lifelong, len(first), len(second), second)
		}
		for i, got := range []map[string]SchemeCounts{first, second} {
			runs := uint64(i + 1)
			if v, _ := countOf(got["leaf1"].Switch, lb.CountDecisions); v != runs*perRun {
				t.Errorf("lifelong %v: after %d runs leaf1 counts %d decisions, want %d", lifelong, runs, v, runs*perRun)
			}
			if v, _ := countOf(got["leaf1"].Hosts, lb.CountGapsNatural); v != runs*hostsPerRun {
				t.Errorf("lifelong %v: after %d runs leaf1's hosts count %d, want %d (h1 + h2)", lifelong, runs, v, runs*hostsPerRun)
			}
		}
	}

	shared := &counting{}
	e, _ := moduleEngine(t, "leafspine:2x2:2@100", shared)
	run(t, e, flows)
	var total uint64
	for sw, sc := range e.Counters().Schemes {
		v, _ := countOf(sc.Switch, lb.CountDecisions)
		t.Logf("%s: %d", sw, v)
		total += v
	}
	if total != shared.n || total == 0 {
		t.Errorf("a module shared by every switch: %d decisions over the switches, want its own %d once", total, shared.n)
	}
}

// linkCounting is a module shared by every switch that counts, per
// egress link, the data packets leaving by it (a per-run count).
type linkCounting struct{ n map[int32]uint64 }

func (c *linkCounting) Select(sw lb.Switch, p *lb.Packet, cands []lb.Egress) int {
	return lb.ECMP(p.Hash, sw.Salt(), len(cands))
}

func (c *linkCounting) Arrive(_ lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind == lb.Data {
		c.n[out.Link]++
	}
	return lb.Normal
}

func (c *linkCounting) Reset(lb.Switch) {
	for l := range c.n {
		c.n[l] = 0
	}
}

func (c *linkCounting) Counts(dst []lb.Count) []lb.Count { return dst }

// Install reports the switch's links toward switches from the start.
func (c *linkCounting) Install(sw lb.Switch) {
	for _, e := range sw.Ports() {
		if _, to := sw.LinkEnds(e.Link); to >= 0 {
			c.n[e.Link] = 0
		}
	}
}

func (c *linkCounting) LinkCounts(dst []lb.LinkCount) []lb.LinkCount {
	for l, n := range c.n {
		dst = append(dst, lb.LinkCount{Link: l, Count: lb.Count{Name: lb.CountElephantIntervals, Value: n}})
	}
	return dst
}

// TestLinkCountersByPort: a module's per-link counts are published at
// the switch and port each link leaves, only for links toward another
// switch, from before the first run when the module says which at
// install, and grow over runs as the switch counters do.
func TestLinkCountersByPort(t *testing.T) {
	t.Parallel()
	flows := []Flow{{ID: 1, Src: "h1", Dst: "h3", Bytes: 64 << 10}, {ID: 2, Src: "h2", Dst: "h4", Bytes: 64 << 10}}
	m := &linkCounting{n: map[int32]uint64{}}
	e, _ := moduleEngine(t, "leafspine:2x2:2@100", m)
	installed := 0
	for _, sc := range e.Counters().Schemes { // before any run: every fabric port, at 0 (lb.Installer)
		for _, p := range sc.Ports {
			if v, ok := countOf(p.Counts, lb.CountElephantIntervals); ok && v == 0 {
				installed++
			}
		}
	}
	if installed != 8 { // 2 leaves x 2 spines, both ways
		t.Errorf("before any run %d fabric ports have their counter at 0, want 8", installed)
	}
	run(t, e, flows)
	want := map[PortKey]uint64{}
	for l, n := range m.n {
		pl := e.links[l]
		if pl.atSwitch && pl.swTo >= 0 {
			want[PortKey{pl.from, pl.fromPort}] += n
		}
	}
	if len(want) == 0 {
		t.Fatal("no packet left a switch toward a switch: the test shows nothing")
	}
	run(t, e, flows)
	got := map[PortKey]uint64{}
	for sw, sc := range e.Counters().Schemes {
		for _, p := range sc.Ports {
			v, ok := countOf(p.Counts, lb.CountElephantIntervals)
			if !ok {
				t.Errorf("%s %s: no count: %v", sw, p.Port, p.Counts)
			}
			got[PortKey{sw, p.Port}] = v
		}
	}
	for k, n := range want {
		if got[k] != 2*n { // the same flows twice: the same paths
			t.Errorf("%v: %d after two runs, want %d", k, got[k], 2*n)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v > 0 {
			t.Errorf("%v: %d, but no link toward a switch leaves it with packets", k, v)
		}
	}
}
