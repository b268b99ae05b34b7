package drill

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// queues is a switch whose egress queues have fixed depths.
type queues struct {
	lb.Switch
	depth map[int32]int64
}

func (q *queues) QueueBytes(link int32, _ int) int64 { return q.depth[link] }
func (q *queues) ID() int                            { return 0 }
func (q *queues) Salt() uint64                       { return 3 }

func TestDrillPicksTheShortestSampledQueue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d, m  string
		depth map[int32]int64
		want  func(got int32) bool
	}{
		// with d = number of candidates... sampling is random: with many
		// packets the remembered best must settle on the empty queue
		{"settles on the shortest", "2", "1", map[int32]int64{0: 9000, 1: 5000, 2: 0, 3: 7000}, func(l int32) bool { return l == 2 }},
		{"avoids the longest", "1", "1", map[int32]int64{0: 1000, 1: 1000, 2: 1000, 3: 1 << 20}, func(l int32) bool { return l != 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := lbtest.New[lb.Module](t, Register, "drill", map[string]string{"d": tc.d, "m": tc.m})
			sw := &queues{depth: tc.depth}
			c := []lb.Egress{{Link: 0}, {Link: 1}, {Link: 2}, {Link: 3}}
			for i := 0; i < 50; i++ { // warm up the memory
				m.Select(sw, &lb.Packet{}, c)
			}
			for i := 0; i < 100; i++ {
				if got := c[m.Select(sw, &lb.Packet{}, c)].Link; !tc.want(got) {
					t.Fatalf("packet %d went to link %d (depths %v)", i, got, tc.depth)
				}
			}
		})
	}
}

// TestCountsDecisionsAndMoves: every data packet is a decision, and one
// that leaves on another link than its flow's previous packet a reroute
// (counted per flow, not across flows); ACKs count nothing; a new run
// (Reset) starts from zero and forgets the flows' last links.
func TestCountsDecisionsAndMoves(t *testing.T) {
	m := lbtest.New[lb.Module](t, Register, "drill", map[string]string{"d": "2", "m": "1"})
	sw := &queues{depth: map[int32]int64{}}
	c := []lb.Egress{{Link: 0}, {Link: 1}, {Link: 2}, {Link: 3}}
	counts := func() map[string]uint64 {
		got := map[string]uint64{}
		for _, c := range m.(lb.Counting).Counts(nil) {
			got[c.Name] = c.Value
		}
		return got
	}
	for run := 0; run < 2; run++ {
		last := map[int32]int32{}
		moves := 0
		for i := 0; i < 200; i++ {
			flow := int32(i % 3)
			link := c[m.Select(sw, &lb.Packet{Flow: flow}, c)].Link
			sw.depth[link] += 1500 // the chosen queue grows: choices move
			if l, ok := last[flow]; ok && l != link {
				moves++
			}
			last[flow] = link
			m.Select(sw, &lb.Packet{Flow: flow, Kind: lb.Ack}, c)
		}
		if got := counts(); got[lb.CountDecisions] != 200 || got[lb.CountReroutes] != uint64(moves) || moves == 0 {
			t.Errorf("run %d: counts %v, want 200 decisions and %d reroutes", run, got, moves)
		}
		m.(lb.Resetter).Reset(sw)
	}
	// One module serves every switch: a flow's choice at its source ToR
	// and at an aggregation switch are two decisions, never a move.
	for i := 0; i < 10; i++ {
		m.Select(sw, &lb.Packet{Flow: 7, Role: lb.SrcToR}, c[:1])
		m.Select(sw, &lb.Packet{Flow: 7, Role: lb.Agg}, c[3:])
	}
	if got := counts(); got[lb.CountDecisions] != 20 || got[lb.CountReroutes] != 0 {
		t.Errorf("a flow through two choosing switches: counts %v, want 20 decisions and no reroute", got)
	}
}
