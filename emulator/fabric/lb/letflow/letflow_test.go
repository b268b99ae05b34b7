package letflow

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// clock is a switch at a settable time (the rest of lb.Switch unused).
type clock struct {
	lb.Switch
	now int64
}

func (c *clock) Now() int64   { return c.now }
func (c *clock) ID() int      { return 0 }
func (c *clock) Salt() uint64 { return 7 }

// newLetFlow is a LetFlow module made through the registry.
func newLetFlow(t *testing.T, timeoutUs string) lb.Module {
	t.Helper()
	return lbtest.New[lb.Module](t, Register, "letflow", map[string]string{"timeout_us": timeoutUs})
}

// TestFlowletsKeepTheirPathUntilAGap: packets closer than the timeout keep
// the path; after a longer gap the flowlet may move, and over many flows
// the new choices spread over the candidates.
func TestFlowletsKeepTheirPathUntilAGap(t *testing.T) {
	m := newLetFlow(t, "10")
	cands := make([]lb.Egress, 4)
	sw := &clock{}
	moved, used := 0, map[int]bool{}
	for h := uint64(1); h <= 200; h++ {
		p := &lb.Packet{Hash: h * 0x9e3779b97f4a7c15}
		sw.now = 0
		first := m.Select(sw, p, cands)
		for k := int64(1); k <= 5; k++ { // 9 us apart: one flowlet
			sw.now = k * 9_000
			if got := m.Select(sw, p, cands); got != first {
				t.Fatalf("flow %d moved within a flowlet at %d ns", h, sw.now)
			}
		}
		sw.now += 10_001 // a gap longer than the timeout
		next := m.Select(sw, p, cands)
		if next != first {
			moved++
		}
		used[next] = true
	}
	if moved < 100 || len(used) != 4 {
		t.Errorf("after a gap %d of 200 flowlets moved, over %d paths: want about 3/4 over all 4", moved, len(used))
	}
}

// TestCountsFlowletsAndMoves: at a source ToR each flow's first packet
// and each packet after a gap longer than the timeout start a data
// flowlet; a flowlet that takes another path than its flow's last is a
// reroute; ACKs and other switches' packets count nothing.
func TestCountsFlowletsAndMoves(t *testing.T) {
	m := newLetFlow(t, "10")
	cands := make([]lb.Egress, 4)
	sw := &clock{}
	moved := 0
	for h := uint64(1); h <= 50; h++ {
		p := &lb.Packet{Hash: h * 0x9e3779b97f4a7c15, Role: lb.SrcToR}
		ack := &lb.Packet{Hash: ^p.Hash, Role: lb.SrcToR, Kind: lb.Ack}
		core := &lb.Packet{Hash: p.Hash + 1, Role: lb.Core}
		sw.now = 0
		first := m.Select(sw, p, cands)
		m.Select(sw, ack, cands)
		m.Select(sw, core, cands)
		sw.now = 9_000 // the same flowlet
		m.Select(sw, p, cands)
		sw.now += 10_001 // a new one
		if m.Select(sw, p, cands) != first {
			moved++
		}
		m.Select(sw, ack, cands)
		m.Select(sw, core, cands)
	}
	got := map[string]uint64{}
	for _, c := range m.(lb.Counting).Counts(nil) {
		got[c.Name] = c.Value
	}
	if got[lb.CountFlowlets] != 100 || got[lb.CountReroutes] != uint64(moved) || moved == 0 {
		t.Errorf("counts %v, want 100 flowlets (2 per flow) and %d reroutes", got, moved)
	}
	m.(lb.Resetter).Reset(sw)
	if c := m.(lb.Counting).Counts(nil); c[0].Value != 0 || c[1].Value != 0 {
		t.Errorf("after Reset: %v, want zeros", c)
	}
}
