package conga

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// leafPair is a switch (leaf 0) with n paths to leaf 1, path i leaving on
// link i, at a settable time; the rest of lb.Switch is unused.
type leafPair struct {
	lb.Switch
	now int64
	n   int
}

func (s *leafPair) Now() int64             { return s.now }
func (s *leafPair) ID() int                { return 0 }
func (s *leafPair) Salt() uint64           { return 11 }
func (s *leafPair) NumLinks() int          { return s.n }
func (s *leafPair) NumSwitches() int       { return 2 }
func (s *leafPair) LinkGbps(int32) float64 { return 100 }
func (s *leafPair) Paths(a, b int) int     { return s.n }
func (s *leafPair) Path(a, b, id int) []lb.Egress {
	return []lb.Egress{{Link: int32(id)}}
}
func (s *leafPair) Pin(p *lb.Packet, id int) bool {
	p.Hdr.Path, p.Hdr.Flags = int32(id), p.Hdr.Flags|lb.FlagPinned
	return true
}

func newModule(t *testing.T, params map[string]string) *module {
	t.Helper()
	return lbtest.New[*module](t, Register, "conga", params)
}

// send is one data packet of flow 0 from leaf 0 to leaf 1 at time now:
// the path its source ToR pins it to.
func send(m *module, sw *leafPair, now int64) int32 {
	sw.now = now
	p := &lb.Packet{Kind: lb.Data, Role: lb.SrcToR, SrcToR: 0, DstToR: 1, Hdr: &lb.Header{}}
	cands := make([]lb.Egress, sw.n)
	for i := range cands {
		cands[i].Link = int32(i)
	}
	m.Select(sw, p, cands)
	return p.Hdr.Path
}

// load makes link li carry bytes now.
func load(m *module, sw *leafPair, li int32, bytes int32) {
	m.Dequeue(sw, &lb.Packet{Bytes: bytes, Hdr: &lb.Header{}}, lb.Egress{Link: li})
}

// TestFlowletTimeoutKeepsThePath: once a flowlet's path is loaded and
// another is idle, the flow keeps its path while its packets come closer
// together than the timeout, and moves to the idle path after a longer
// gap; with no better path it stays after any gap.
func TestFlowletTimeoutKeepsThePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout string // us
		gap     int64  // ns between packets after the load
		loaded  bool   // the first path is loaded
		moves   bool
	}{
		{"closer than the timeout", "10", 9_000, true, false},
		{"exactly the timeout", "10", 10_000, true, false},
		{"a longer gap", "10", 10_001, true, true},
		{"sub-microsecond timeout, longer gap", "0.5", 600, true, true},
		{"sub-microsecond timeout, shorter gap", "0.5", 400, true, false},
		{"longer gap, no better path", "10", 50_000, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModule(t, map[string]string{"flowlet_timeout_us": tc.timeout})
			sw := &leafPair{n: 2}
			first := send(m, sw, 0)
			if tc.loaded { // 80 % of the link over one estimator time constant
				load(m, sw, first, int32(0.8*100/8*m.dc.tau()))
			}
			now := int64(0)
			for i := 0; i < 5; i++ {
				now += tc.gap
				got := send(m, sw, now)
				if moved := got != first; moved != (tc.moves && i == 0) {
					t.Fatalf("packet %d, %d ns after the previous: path %d (before %d), want a move only if %v and first",
						i+1, tc.gap, got, first, tc.moves)
				}
				first = got // a new flowlet stays on the idle path
			}
		})
	}
}

// TestNewFlowsTakeTheLeastCongestedPath: a new flowlet avoids a path
// whose local uplink or fed-back metric is high, and spreads evenly
// (randomly) over equally good ones.
func TestNewFlowsTakeTheLeastCongestedPath(t *testing.T) {
	t.Parallel()
	m := newModule(t, nil)
	sw := &leafPair{n: 4}
	load(m, sw, 1, int32(0.5*100/8*m.dc.tau())) // path 1: local uplink at half load
	m.tables(sw, 0).to(sw, 0, 1).set(2, 5, 0)   // path 2: leaf 1 fed back 5
	counts := make([]int, 4)
	for f := int32(0); f < 400; f++ {
		sw.now = int64(f)
		p := &lb.Packet{Kind: lb.Data, Role: lb.SrcToR, Flow: f, DstToR: 1, Hdr: &lb.Header{}}
		m.Select(sw, p, make([]lb.Egress, 4))
		counts[p.Hdr.Path]++
	}
	if counts[1] != 0 || counts[2] != 0 || counts[0] < 150 || counts[3] < 150 {
		t.Errorf("flows per path %v: want none on the loaded paths 1 and 2, about half on each of 0 and 3", counts)
	}
}

// TestFeedbackRoundRobinAndAging: a destination ToR feeds back changed
// metrics first, in round-robin order, then refreshes the fresh ones;
// metrics older than the age count as 0 and are not fed back.
func TestFeedbackRoundRobinAndAging(t *testing.T) {
	t.Parallel()
	const age = 1000
	tab := newPathMetrics(4)
	tab.set(2, 6, 0)
	tab.set(0, 3, 0)
	var got []int32
	for i := 0; i < 4; i++ {
		id, metric, ok := tab.feedback(10, age)
		if !ok {
			t.Fatalf("feedback %d: nothing", i)
		}
		got = append(got, id, metric)
	}
	// changed 0 and 2 first (round robin from 0), then both again
	if want := []int32{0, 3, 2, 6, 0, 3, 2, 6}; !equal(got, want) {
		t.Errorf("feedback (path, metric) %v, want %v", got, want)
	}
	tab.set(2, 6, 500) // unchanged: refreshed, not marked
	tab.set(3, 1, 500) // changed
	if id, _, _ := tab.feedback(600, age); id != 3 {
		t.Errorf("after a change of path 3 the feedback is about path %d", id)
	}
	if m := tab.get(0, 1001, age); m != 0 {
		t.Errorf("path 0 not refreshed for longer than the age: metric %d, want 0", m)
	}
	if m := tab.get(2, 1001, age); m != 6 {
		t.Errorf("path 2 refreshed at 500: metric %d, want 6", m)
	}
	for i := 0; i < 4; i++ {
		if id, _, ok := tab.feedback(1400, age); !ok || id == 0 {
			t.Errorf("feedback at 1400: path %d (ok %v); path 0 aged out", id, ok)
		}
	}
	if _, _, ok := tab.feedback(5000, age); ok {
		t.Error("everything aged out, yet feedback")
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
