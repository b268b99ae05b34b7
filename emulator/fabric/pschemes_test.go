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
