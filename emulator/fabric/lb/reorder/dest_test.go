package reorder

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// fakeSwitch records what Dest asks of the engine: queues taken, paused
// (with their timeouts), resumed and freed; timers; fallbacks.
type fakeSwitch struct {
	lb.Switch
	now       int64
	limit     int // queues the port offers
	inUse     int
	log       []string
	timeouts  map[lb.Queue]int64
	next      lb.Queue
	fallbacks int
	ticks     []int64 // when each scheduled tick fires
}

func (s *fakeSwitch) Now() int64 { return s.now }
func (s *fakeSwitch) ID() int    { return 0 }
func (s *fakeSwitch) AllocQueue(int32, int) (lb.Queue, bool) {
	if s.inUse >= s.limit {
		s.log = append(s.log, "exhausted")
		return lb.Normal, false
	}
	s.inUse++
	s.next++
	s.log = append(s.log, "alloc")
	return s.next, true
}
func (s *fakeSwitch) Pause(q lb.Queue, t int64) { s.timeouts[q] = t }
func (s *fakeSwitch) Resume(lb.Queue)           { s.log = append(s.log, "resume") }
func (s *fakeSwitch) FreeQueue(lb.Queue)        { s.inUse--; s.log = append(s.log, "free") }
func (s *fakeSwitch) Fallback()                 { s.fallbacks++; s.log = append(s.log, "fallback") }
func (s *fakeSwitch) Schedule(d, _ int64)       { s.ticks = append(s.ticks, s.now+d) }

// pkt is one data packet of a flow at the destination ToR.
type pkt struct {
	at       int64 // arrival, ns
	flow     int32
	epoch    int64
	tail     bool
	rerouted bool
	tx, tx2  int64 // departure and tail departure at the source ToR
	held     bool  // want: put in a reorder queue
	current  bool  // want: of the current epoch
}

func TestDestStateMachine(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name    string
		limit   int
		pkts    []pkt
		log     string // the engine calls, in order
		timeout int64  // the first queue's last timeout, ns
		stats   Stats
	}{
		{name: "in order: nothing held", limit: 8, pkts: []pkt{
			{at: 10_000, epoch: 1, tx: 5_000, current: true},
			{at: 11_000, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
			{at: 12_000, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, current: true},
			{at: 13_000, epoch: 2, tx: 8_000, current: true},
		}},
		{name: "early rerouted packets wait for the tail", limit: 8, pkts: []pkt{
			{at: 10_000, epoch: 1, tx: 5_000, current: true},
			{at: 10_500, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, held: true, current: true},
			{at: 10_600, epoch: 1, rerouted: true, tx: 7_100, tx2: 6_000, held: true, current: true},
			{at: 11_000, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
			{at: 11_100, epoch: 1, rerouted: true, tx: 7_200, tx2: 6_000, current: true},
		}, log: "alloc resume free", timeout: 10_000 + 1_000 + 8_000 - 10_500,
			stats: Stats{Held: 2, Queues: 1, ByTail: 1}},
		{name: "an old-path packet pushes the deadline", limit: 8, pkts: []pkt{
			{at: 10_000, epoch: 1, tx: 5_000, current: true},
			{at: 10_500, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, held: true, current: true},
			{at: 12_000, epoch: 1, tx: 5_500, current: true},
			{at: 13_000, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
		}, log: "alloc resume free", timeout: 500 + 8_000, stats: Stats{Held: 1, Queues: 1, ByTail: 1}},
		{name: "a rerouted packet first: default wait", limit: 8, pkts: []pkt{
			{at: 10_000, epoch: 2, rerouted: true, tx: 7_000, tx2: 6_000, held: true, current: true},
			{at: 11_000, epoch: 2, tail: true, tx: 6_000, tx2: 6_000, current: true},
			{at: 11_500, epoch: 1, tx: 1_000},
		}, log: "alloc resume free", timeout: 200_000 + 8_000, stats: Stats{Held: 1, Queues: 1, ByTail: 1, Stragglers: 1}},
		{name: "the deadline passes: released, the late tail goes as it comes", limit: 8, pkts: []pkt{
			{at: 10_000, epoch: 1, tx: 5_000, current: true},
			{at: 10_500, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, held: true, current: true},
			{at: 50_000, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
			{at: 50_100, epoch: 1, rerouted: true, tx: 7_100, tx2: 6_000, current: true},
		}, log: "alloc resume free", timeout: 8_500, stats: Stats{Held: 1, Queues: 1, Expired: 1}},
		{name: "no queue left: fall back once per reroute", limit: 0, pkts: []pkt{
			{at: 10_000, epoch: 1, tx: 5_000, current: true},
			{at: 10_500, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, current: true},
			{at: 10_600, epoch: 1, rerouted: true, tx: 7_100, tx2: 6_000, current: true},
			{at: 11_000, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
			{at: 20_000, epoch: 2, tx: 15_000, current: true},
			{at: 20_500, epoch: 2, rerouted: true, tx: 17_000, tx2: 16_000, current: true},
		}, log: "exhausted fallback exhausted fallback", stats: Stats{Fallbacks: 2}},
		{name: "two flows, one queue", limit: 1, pkts: []pkt{
			{at: 10_000, flow: 0, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, held: true, current: true},
			{at: 10_100, flow: 1, epoch: 1, rerouted: true, tx: 7_000, tx2: 6_000, current: true},
			{at: 11_000, flow: 0, epoch: 1, tail: true, tx: 6_000, tx2: 6_000, current: true},
		}, log: "alloc exhausted fallback resume free", timeout: 208_000,
			stats: Stats{Held: 1, Queues: 1, ByTail: 1, Fallbacks: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(cfg)
			sw := &fakeSwitch{limit: tc.limit, timeouts: map[lb.Queue]int64{}}
			for i, k := range tc.pkts {
				sw.now = k.at
				h := &lb.Header{}
				Stamp(h, k.epoch, k.tail, k.rerouted, k.tx, k.tx2)
				q, cur := d.Arrive(sw, &lb.Packet{Kind: lb.Data, Role: lb.DstToR, Flow: k.flow, Hdr: h}, lb.Egress{})
				if (q != lb.Normal) != k.held || cur != k.current {
					t.Errorf("packet %d: queue %d, current epoch %v; want held %v, current %v", i, q, cur, k.held, k.current)
				}
			}
			if got := strings.Join(sw.log, " "); got != tc.log {
				t.Errorf("engine calls %q, want %q", got, tc.log)
			}
			if tc.timeout != 0 && sw.timeouts[1] != tc.timeout {
				t.Errorf("queue 1's timeout %d ns, want %d", sw.timeouts[1], tc.timeout)
			}
			if got := d.Stats(); got != tc.stats {
				t.Errorf("stats %+v, want %+v", got, tc.stats)
			}
			if sw.inUse != 0 {
				t.Errorf("%d queues not given back", sw.inUse)
			}
		})
	}
}

// TestTickGivesBackAnExpiredQueue: a flow that sends nothing after its
// queue's deadline still gives the queue back, by the timer; a timer that
// fires early (the deadline moved) sets itself again.
func TestTickGivesBackAnExpiredQueue(t *testing.T) {
	t.Parallel()
	d := New(DefaultConfig())
	sw := &fakeSwitch{limit: 1, timeouts: map[lb.Queue]int64{}}
	arrive := func(at int64, rerouted bool, tx int64) {
		sw.now = at
		h := &lb.Header{}
		Stamp(h, 1, false, rerouted, tx, 6_000)
		d.Arrive(sw, &lb.Packet{Kind: lb.Data, Role: lb.DstToR, Hdr: h}, lb.Egress{})
	}
	arrive(10_000, false, 5_000)
	arrive(10_500, true, 7_000) // deadline 19 us
	arrive(12_000, false, 5_500)
	if len(sw.ticks) != 1 || sw.inUse != 1 {
		t.Fatalf("ticks %v, %d queues in use", sw.ticks, sw.inUse)
	}
	sw.now = sw.ticks[0]
	d.Tick(sw, 0) // early: the deadline moved to 12+0.5+8 us
	if len(sw.ticks) != 2 || sw.inUse != 1 {
		t.Fatalf("an early tick: ticks %v, %d queues in use", sw.ticks, sw.inUse)
	}
	sw.now = sw.ticks[1]
	d.Tick(sw, 0)
	if sw.inUse != 0 || d.Stats().Expired != 1 {
		t.Errorf("after the deadline: %d queues in use, stats %+v", sw.inUse, d.Stats())
	}
}

func TestFlowTable(t *testing.T) {
	t.Parallel()
	var ft FlowTable[int]
	*ft.Get(7000) = 1
	*ft.Get(3) = 2
	if *ft.Get(7000) != 1 || *ft.Get(3) != 2 || *ft.Get(4) != 0 || len(ft.rows) != 3 {
		t.Errorf("rows %v", ft.rows)
	}
	ft.Reset()
	if *ft.Get(7000) != 0 || len(ft.rows) != 1 {
		t.Errorf("after Reset: rows %v", ft.rows)
	}
}
