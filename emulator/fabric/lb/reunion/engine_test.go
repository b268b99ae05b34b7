package reunion

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// newModule is a Reunion module with some parameters changed.
func newModule(t testing.TB, params map[string]string) *Module {
	t.Helper()
	return lbtest.New[*Module](t, Register, "reunion", params)
}

// perLink watches a module and records, per window of win ns and switch
// egress link toward another switch, the data bytes each flow sent on it.
type perLink struct {
	lb.Module
	win   int64
	bytes map[[3]int64]int64 // window, link, flow
}

func (w *perLink) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if _, to := sw.LinkEnds(out.Link); p.Kind == lb.Data && to >= 0 {
		w.bytes[[3]int64{sw.Now() / w.win, int64(out.Link), int64(p.Flow)}] += int64(p.Bytes)
	}
	if a, ok := w.Module.(lb.Arriver); ok {
		return a.Arrive(sw, p, out)
	}
	return lb.Normal
}

func (w *perLink) Receive(sw lb.Switch, p *lb.Packet) { w.Module.(lb.Receiver).Receive(sw, p) }
func (w *perLink) Tick(sw lb.Switch, arg int64)       { w.Module.(lb.Ticker).Tick(sw, arg) }
func (w *perLink) Reset(sw lb.Switch)                 { w.Module.(lb.Resetter).Reset(sw) }

// ecmpOnly forwards as ECMP does (the control), with hooks that do nothing.
type ecmpOnly struct{}

func (ecmpOnly) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	return lb.ECMP(p.Hash, sw.Salt(), len(c))
}
func (ecmpOnly) Receive(lb.Switch, *lb.Packet) {}
func (ecmpOnly) Tick(lb.Switch, int64)         {}
func (ecmpOnly) Reset(lb.Switch)               {}

// most is, per window, the most flows any link carried with at least a
// quarter of the window's line-rate bytes each (a rerouted flow's last
// packets on its old path do not count).
func (w *perLink) most(gbps float64) map[int64]int {
	floor := int64(gbps / 8 * float64(w.win) / 4)
	n := map[[2]int64]int{}
	for k, b := range w.bytes {
		if b >= floor {
			n[[2]int64{k[0], k[1]}]++
		}
	}
	most := map[int64]int{}
	for k, c := range n {
		most[k[0]] = max(most[k[0]], c)
	}
	return most
}

// ring is a ring between racks on spec's leaves of hosts each: host i
// sends bytes to the host at the same place in the next rack.
func ring(leaves, hosts int, bytes int64) []fabric.Flow {
	var fs []fabric.Flow
	for i := 0; i < leaves*hosts; i++ {
		fs = append(fs, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i), Dst: fmt.Sprintf("h%d", 1+(i+hosts)%(leaves*hosts)), Bytes: bytes, Priority: 3})
	}
	return fs
}

// TestCollidingElephantsSpreadOut: a ring of 16 MiB elephants between
// the racks of 4 spines x 4 leaves x 2 hosts (half the uplinks needed):
// under ECMP (the control) some link carries two elephants; under
// Reunion with s = 100 us, from the fifth interval until the first flow
// ends, no link carries more than t = 1 in any interval, and the
// receivers see at most 0.1 % of packets out of sequence (the paper's
// bound on what its reroutes reorder). The run logs its reroutes,
// notifications and the out-of-sequence share.
func TestCollidingElephantsSpreadOut(t *testing.T) {
	t.Parallel()
	topo, _ := lbtest.Topology(t, "leafspine:8x4:4@100", nil)
	fs := ring(4, 4, 16<<20)
	const win = 100_000
	for _, tc := range []struct {
		name string
		mod  lb.Module
	}{{"ecmp", ecmpOnly{}}, {"reunion", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m *Module
			w := &perLink{Module: tc.mod, win: win, bytes: map[[3]int64]int64{}}
			if tc.mod == nil {
				m = newModule(t, map[string]string{"interval_us": "100"})
				w.Module = m
			}
			cfg := fabric.DefaultConfig()
			cfg.Seed = 1
			o := lbtest.Run(t, topo, cfg, w, nil, fs)
			first := o.Results[0].End
			for _, r := range o.Results {
				first = min(first, r.End)
			}
			most, worst, worstLate := w.most(100), 0, 0
			for win0, n := range most {
				worst = max(worst, n)
				if win0 >= 5 && (win0+1)*win <= first {
					worstLate = max(worstLate, n)
				}
			}
			pkts := uint64(len(fs)) * (16 << 20) / uint64(cfg.MTU)
			t.Logf("longest FCT %d us, first end %d us; most elephants on a link %d (from the 5th interval %d); OOO %d of %d packets (%.4f%%)",
				o.Last/1000, first/1000, worst, worstLate, o.OOO, pkts, 100*float64(o.OOO)/float64(pkts))
			if m == nil {
				if worst < 2 {
					t.Fatalf("ECMP put no two elephants on a link: the test shows nothing")
				}
				return
			}
			s := m.Stats()
			t.Logf("%+v", s)
			if worstLate > 1 {
				t.Errorf("a link carried %d elephants after the fourth interval", worstLate)
			}
			if share := float64(o.OOO) / float64(pkts); share > 0.001 { // the paper's bound: < 0.1 %
				t.Errorf("%.3f %% of packets arrived out of sequence, more than the paper's 0.1 %%", 100*share)
			}
			if s.Reroutes == 0 || s.Notifies == 0 || s.Elephants != int64(len(fs)) {
				t.Errorf("want reroutes, notifications and %d elephants: %+v", len(fs), s)
			}
		})
	}
}
