package fabric

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/inventory"
)

// reorderer is a toy ConWeave: the source ToR sends a flow's first k
// packets over the slow spine and the rest over the fast one, marking the
// old path's last packet TAIL and the later ones REROUTED; the destination
// ToR holds rerouted packets that come before the tail in a reorder queue
// and resumes it when the tail arrives.
type reorderer struct {
	k       int64
	hold    bool // hold early packets at the destination ToR
	resume  bool // resume on the tail (else only the timeout does)
	e       *PacketEngine
	queues  map[int32]lb.Queue // per flow; -1: fell back
	tail    map[int32]bool
	alloc   map[int32]int64 // ns: when a flow's queue was taken
	out     map[int32]int64 // ns: when its first held packet left the ToR
	unacct  int             // held bytes the switch buffer or PFC accounting missed
	maxHeld int64
}

func newReorderer(k int64, hold, resume bool) *reorderer {
	return &reorderer{k: k, hold: hold, resume: resume, queues: map[int32]lb.Queue{}, tail: map[int32]bool{},
		alloc: map[int32]int64{}, out: map[int32]int64{}}
}

func (m *reorderer) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind != lb.Data || p.Role != lb.SrcToR {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	for id := 0; id < sw.Paths(p.SrcToR, p.DstToR); id++ {
		slow := sw.Path(p.SrcToR, p.DstToR, id)[0].Next == "spine1"
		if slow == (p.PSN < m.k) {
			sw.Pin(p, id)
		}
	}
	switch {
	case p.PSN == m.k-1:
		p.Hdr.Flags |= lb.FlagTail
	case p.PSN >= m.k:
		p.Hdr.Flags |= lb.FlagRerouted
	}
	return 0
}

func (m *reorderer) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if !m.hold || p.Kind != lb.Data || p.Role != lb.DstToR {
		return lb.Normal
	}
	q, has := m.queues[p.Flow]
	switch {
	case p.Hdr.Flags&lb.FlagTail != 0:
		m.tail[p.Flow] = true
		if has && q > 0 && m.resume {
			sw.Resume(q)
			sw.FreeQueue(q) // its packets still go, after the tail
			m.queues[p.Flow] = -1
		}
		return lb.Normal
	case p.Hdr.Flags&lb.FlagRerouted == 0 || m.tail[p.Flow] && m.resume:
		return lb.Normal
	case !has:
		var ok bool
		if q, ok = sw.AllocQueue(out.Link, int(p.Priority)); !ok {
			sw.Fallback()
			q = -1
		}
		m.queues[p.Flow], m.alloc[p.Flow] = q, sw.Now()
	}
	if q < 0 {
		return lb.Normal
	}
	m.check(sw, q)
	p.Hdr.Flags |= held
	return q
}

// held marks the packets a reorder queue took.
const held = lb.FlagUser

// check: what the queue holds is in the switch's buffer and in its
// ingress ports' PFC accounting.
func (m *reorderer) check(sw lb.Switch, q lb.Queue) {
	_, held := sw.QueueHeld(q)
	m.maxHeld = max(m.maxHeld, held)
	var in int64
	for i := range m.e.links {
		if l := &m.e.links[i]; l.swTo == int32(sw.ID()) {
			in += l.inBytes[roceQueue]
		}
	}
	if held > m.e.swUsed[sw.ID()] || held > in {
		m.unacct++
	}
}

func (m *reorderer) Dequeue(sw lb.Switch, p *lb.Packet, _ lb.Egress) {
	if p.Role == lb.DstToR && p.Kind == lb.Data && p.Hdr.Flags&held != 0 {
		if _, seen := m.out[p.Flow]; !seen {
			m.out[p.Flow] = sw.Now()
		}
	}
}

// slowSpine is a leaf-spine of 2 spines whose links through spine1 take
// 5 us instead of 1.
func slowSpine(t *testing.T, hostsPerLeaf int) *Topology {
	t.Helper()
	lab, err := inventory.Generate(fmt.Sprintf("leafspine:2x2:%d@100", hostsPerLeaf))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lab.Links {
		if l.A.Device == "spine1" || l.B.Device == "spine1" {
			lab.Links[i].DelayNs = 5000
		}
	}
	topo, err := NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func reorderRun(t *testing.T, m *reorderer, cfg Config, flows []Flow) (ooo uint64, st ReorderStats) {
	t.Helper()
	e, err := NewPacketEngineLB(slowSpine(t, 4), cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	m.e = e
	run(t, e, flows)
	for _, p := range e.Counters().Ports {
		ooo += p.OutOfSequence
	}
	if m.unacct != 0 {
		t.Errorf("%d times held bytes were missing from the switch buffer or the PFC ingress accounting", m.unacct)
	}
	if st := e.ReorderStats(); st.InUse != 0 {
		t.Errorf("%d reorder queues still in use after the run", st.InUse)
	}
	return ooo, e.ReorderStats()
}

// TestReorderQueueDeliversInOrder: rerouting onto a faster path reorders
// at the receiver, unless the destination ToR holds the early packets
// until the old path's tail has passed.
func TestReorderQueueDeliversInOrder(t *testing.T) {
	t.Parallel()
	flow := []Flow{{ID: 1, Src: "h1", Dst: "h5", Bytes: 64 * 4096}}
	for _, tc := range []struct {
		name string
		hold bool
	}{{"no reorder queue", false}, {"reorder queue", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newReorderer(8, tc.hold, true)
			ooo, st := reorderRun(t, m, DefaultConfig(), flow)
			switch {
			case !tc.hold && ooo == 0:
				t.Error("the receiver saw no reordering: the test's paths do not reorder")
			case tc.hold && (ooo != 0 || st.Allocs != 1 || st.Timeouts != 0 || m.maxHeld == 0):
				t.Errorf("held at most %d bytes; receiver saw %d out of sequence; stats %+v", m.maxHeld, ooo, st)
			}
		})
	}
}

// TestReorderQueuesRunOut: four flows rerouted at once into one egress
// port need four queues; with fewer the rest fall back, counted.
func TestReorderQueuesRunOut(t *testing.T) {
	t.Parallel()
	var flows []Flow
	for i := 0; i < 4; i++ {
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i), Dst: "h5", Bytes: 64 * 4096})
	}
	for _, tc := range []struct {
		queues        int
		maxInUse      int
		failed        int64
		orderRequired bool
	}{{2, 2, 2, false}, {3, 3, 1, false}, {8, 4, 0, true}, {0, 4, 0, true}, {-1, 4, 0, true}} {
		t.Run(fmt.Sprintf("%d per port", tc.queues), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.ReorderQueues = tc.queues
			m := newReorderer(8, true, true)
			ooo, st := reorderRun(t, m, cfg, flows)
			if st.MaxInUse != tc.maxInUse || st.Exhausted != tc.failed || st.Fallbacks != tc.failed || st.Allocs != int64(4-tc.failed) {
				t.Errorf("stats %+v, want at most %d in use and %d refused and fallen back", st, tc.maxInUse, tc.failed)
			}
			if tc.orderRequired && ooo != 0 {
				t.Errorf("%d out of sequence with a queue per flow", ooo)
			}
		})
	}
}

// TestPausedQueueTimesOut: a queue nobody resumes (it holds every rerouted
// packet) is resumed by its timeout, counted, and its packets leave no
// earlier than that, in order.
func TestPausedQueueTimesOut(t *testing.T) {
	t.Parallel()
	for _, timeout := range []int64{30_000, 80_000} {
		t.Run(fmt.Sprintf("%dus", timeout/1000), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.ReorderTimeoutNs = timeout
			m := newReorderer(8, true, false)
			ooo, st := reorderRun(t, m, cfg, []Flow{{ID: 1, Src: "h1", Dst: "h5", Bytes: 64 * 4096}})
			if st.Timeouts != 1 || st.Allocs != 1 || ooo != 0 {
				t.Fatalf("stats %+v, %d out of sequence: want one queue that timed out, in order", st, ooo)
			}
			at, left := m.alloc[0], m.out[0]
			if left < at+timeout || left > at+timeout+5_000 {
				t.Errorf("queue taken at %d ns, its first packet left at %d ns: want just after the %d ns timeout", at, left, timeout)
			}
		})
	}
}
