package gemma

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// star is a switch view for the report logic alone: switch 0 is a core
// with one port (link i) to each edge switch i+1; queue[i] is that port's
// depth. The reports it sends and the timers it sets are recorded.
type star struct {
	lb.Switch
	id, edges int
	now       int64
	queue     []int64
	sent      []sent
	timers    []int64
}

type sent struct {
	to int
	h  lb.Header
}

func (s *star) ID() int          { return s.id }
func (s *star) Now() int64       { return s.now }
func (s *star) Salt() uint64     { return 7 }
func (s *star) NumSwitches() int { return s.edges + 1 }
func (s *star) Tier() lb.Tier {
	if s.id == 0 {
		return lb.TierCore
	}
	return lb.TierToR
}
func (s *star) SwitchTier(id int) lb.Tier {
	if id == 0 {
		return lb.TierCore
	}
	return lb.TierToR
}
func (s *star) Ports() []lb.Egress {
	var ps []lb.Egress
	for i := 0; i < s.edges; i++ {
		ps = append(ps, lb.Egress{Link: int32(i)})
	}
	return ps
}
func (s *star) LinkEnds(l int32) (int, int) { return 0, int(l) + 1 }
func (s *star) QueueBytes(l int32, prio int) int64 {
	if prio == 3 {
		return s.queue[l]
	}
	return 0
}
func (s *star) Send(to int, _ int, h *lb.Header) bool {
	s.sent = append(s.sent, sent{to, *h})
	return true
}
func (s *star) Schedule(d, _ int64) { s.timers = append(s.timers, d) }

// TestReportPeriodAdapts: the period halves while some queue toward an
// edge moves by report_change_kb or more between reports, doubles while
// none does, and never leaves [report_min_us, report_max_us].
func TestReportPeriodAdapts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		queues [][]int64 // the core's queues at each report
		want   []int64   // the period set after each report, us
	}{
		{"idle: lengthens to the longest", [][]int64{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}},
			[]int64{4, 8, 16, 32, 32, 32}},
		{"steady and long: lengthens too", [][]int64{{500_000, 0}, {500_000, 0}, {505_000, 0}, {500_000, 0}},
			[]int64{2, 4, 8, 16}},
		{"changing: shortens to the shortest, then lengthens once steady",
			[][]int64{{0, 0}, {0, 0}, {0, 0}, {0, 20_000}, {0, 40_000}, {30_000, 40_000}, {30_000, 60_000}, {30_000, 60_000}},
			[]int64{4, 8, 16, 8, 4, 2, 2, 4}},
		{"a change of exactly report_change_kb counts", [][]int64{{0, 0}, {0, 0}, {10_000, 0}},
			[]int64{4, 8, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModule(t, map[string]string{"report_min_us": "2", "report_max_us": "32", "report_change_kb": "10"})
			sw := &star{edges: 2, queue: make([]int64, 2)}
			m.Reset(sw)
			if len(sw.timers) != 1 || sw.timers[0] != 2_000+7 { // the salt's offset
				t.Fatalf("the first report is set after %v ns, want 2007", sw.timers)
			}
			for i, q := range tc.queues {
				copy(sw.queue, q)
				sw.now += sw.timers[len(sw.timers)-1]
				m.Tick(sw, tickReport)
				if got := sw.timers[len(sw.timers)-1]; got != tc.want[i]*1000 {
					t.Errorf("after report %d (queues %v): period %d ns, want %d us", i, q, got, tc.want[i])
				}
			}
		})
	}
}

// TestReportsFillTheEdgesTables: a core of 10 edges reports to each the
// queues toward the 9 others (two packets: 8 entries fit in one), in
// 64-byte cells; an edge that takes them has them in its downlink
// congestion table, and its scan clears them once older than two of the
// longest periods.
func TestReportsFillTheEdgesTables(t *testing.T) {
	t.Parallel()
	m := newModule(t, nil)
	core := &star{edges: 10, queue: make([]int64, 10)}
	for i := range core.queue {
		core.queue[i] = int64(i)*100_000 + 130 // 130 B: 2 whole cells
	}
	core.queue[9] = 8 << 20 // past 16 bits of cells: saturates
	m.Reset(core)
	core.now = 2_000
	m.Tick(core, tickReport)
	if len(core.sent) != 20 || m.Stats().Reports != 20 || m.Stats().CtrlBytes != 20*64 {
		t.Fatalf("%d reports sent (%+v), want 2 to each of 10 edges", len(core.sent), m.Stats())
	}
	edge := &star{id: 4, edges: 10, now: 3_000}
	m.Reset(edge)
	for _, r := range core.sent {
		if r.to == 4 {
			m.Receive(edge, &lb.Packet{Kind: lb.Control, SrcToR: 0, DstToR: 4, Flow: -1, Hdr: &r.h})
		}
	}
	s := m.sw(4)
	for dst := 1; dst <= 10; dst++ {
		want := (int64(dst-1)*100_000 + 130) / 64 * 64
		switch dst {
		case 4:
			want = 0 // its own queue is not reported to it
		case 10:
			want = maxCells * 64
		}
		if got := s.l2Of(11, 0, dst); got != want {
			t.Errorf("edge 4's table: core 0 toward edge %d: %d bytes, want %d", dst, got, want)
		}
	}
	edge.now += 2 * m.period.MaxNs
	m.Tick(edge, tickScan)
	if s.l2Of(11, 0, 1) == 0 {
		t.Error("the scan cleared an entry two periods old")
	}
	edge.now++
	m.Tick(edge, tickScan)
	if got := s.l2Of(11, 0, 1); got != 0 || m.Stats().Expired != 9 {
		t.Errorf("after the scan: %d bytes, %d expired; want 0, 9", got, m.Stats().Expired)
	}
}
