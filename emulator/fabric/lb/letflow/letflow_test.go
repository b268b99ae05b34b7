package letflow

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// clock is a switch at a settable time (the rest of lb.Switch unused).
type clock struct {
	lb.Switch
	now int64
}

func (c *clock) Now() int64   { return c.now }
func (c *clock) ID() int      { return 0 }
func (c *clock) Salt() uint64 { return 7 }

// TestFlowletsKeepTheirPathUntilAGap: packets closer than the timeout keep
// the path; after a longer gap the flowlet may move, and over many flows
// the new choices spread over the candidates.
func TestFlowletsKeepTheirPathUntilAGap(t *testing.T) {
	reg := lb.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	m, err := reg.New("letflow", map[string]string{"timeout_us": "10"})
	if err != nil {
		t.Fatal(err)
	}
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
