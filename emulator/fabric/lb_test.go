package fabric

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
)

// moduleEngine is a packet engine on a generated topology whose switches
// all run m.
func moduleEngine(t *testing.T, spec string, m lb.Module) (*PacketEngine, *Topology) {
	t.Helper()
	topo := generated(t, spec)
	e, err := NewPacketEngineLB(topo, DefaultConfig(), m)
	if err != nil {
		t.Fatal(err)
	}
	return e, topo
}

// roles records the role of every switch for every kind of packet.
type roles struct {
	ecmp.Module
	seen  map[string]lb.Role // "kind@switch"
	tiers map[string]lb.Tier
}

func (r *roles) Arrive(sw lb.Switch, p *lb.Packet, _ lb.Egress) lb.Queue {
	r.seen[fmt.Sprintf("%d@%s", p.Kind, sw.Name())] = p.Role
	r.tiers[sw.Name()] = sw.Tier()
	return lb.Normal
}

func TestRolesAtEverySwitch(t *testing.T) {
	t.Parallel()
	data, ack := fmt.Sprint(lb.Data), fmt.Sprint(lb.Ack)
	for _, tc := range []struct {
		name, spec, src, dst string
		want                 map[string]lb.Role // "kind@switch"
		tiers                map[string]lb.Tier
	}{
		{"leaf-spine", "leafspine:1x2:2@100", "h1", "h3",
			map[string]lb.Role{data + "@leaf1": lb.SrcToR, data + "@spine1": lb.Core, data + "@leaf2": lb.DstToR,
				ack + "@leaf2": lb.SrcToR, ack + "@spine1": lb.Core, ack + "@leaf1": lb.DstToR},
			map[string]lb.Tier{"leaf1": lb.TierToR, "spine1": lb.TierCore}},
		{"same-tor", "leafspine:1x2:2@100", "h1", "h2",
			map[string]lb.Role{data + "@leaf1": lb.SameToR, ack + "@leaf1": lb.SameToR}, nil},
		{"fat-tree", "fattree:4@100", "h1", "h16",
			map[string]lb.Role{data + "@edge1-1": lb.SrcToR, data + "@edge4-2": lb.DstToR, ack + "@edge4-2": lb.SrcToR,
				ack + "@edge1-1": lb.DstToR},
			map[string]lb.Tier{"edge1-1": lb.TierToR, "agg1-1": lb.TierAgg, "core1": lb.TierCore}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &roles{seen: map[string]lb.Role{}, tiers: map[string]lb.Tier{}}
			e, _ := moduleEngine(t, tc.spec, r)
			run(t, e, []Flow{{ID: 1, Src: tc.src, Dst: tc.dst, Bytes: 1 << 20}}) // long enough for ACKs to return
			for k, want := range tc.want {
				if got, ok := r.seen[k]; !ok || got != want {
					t.Errorf("%s: role %v (seen %v), want %v", k, got, ok, want)
				}
			}
			for sw, want := range tc.tiers {
				v := e.sws[e.swID[sw]]
				for _, p := range v.Ports() {
					if from, _ := v.LinkEnds(p.Link); from != v.ID() {
						t.Errorf("%s: port %s is link %d, which leaves switch %d", sw, p.Port, p.Link, from)
					}
				}
				if len(v.Ports()) == 0 {
					t.Errorf("%s: no ports", sw)
				}
				if got := r.tiers[sw]; got != want {
					t.Errorf("%s: tier %d, want %d", sw, got, want)
				}
			}
			for k, role := range r.seen { // in a fat-tree every other switch is agg or core
				sw := k[strings.Index(k, "@")+1:]
				if strings.HasPrefix(sw, "agg") && role != lb.Agg || strings.HasPrefix(sw, "core") && role != lb.Core {
					t.Errorf("%s: role %v", k, role)
				}
			}
		})
	}
}

// stamper writes a header at the source ToR and checks it at the
// destination ToR; ACKs must arrive at their own source ToR with a fresh
// header.
type stamper struct {
	ecmp.Module
	stamped, checked, bad int
}

func (s *stamper) Arrive(sw lb.Switch, p *lb.Packet, _ lb.Egress) lb.Queue {
	switch {
	case p.Role == lb.SrcToR && p.Kind != lb.Data:
		if *p.Hdr != (lb.Header{}) {
			s.bad++
		}
	case p.Role == lb.SrcToR:
		p.Hdr.Words[0], p.Hdr.TS, p.Hdr.Flags = p.PSN+1000, sw.Now(), lb.FlagTail
		s.stamped++
	case p.Role == lb.DstToR && p.Kind == lb.Data:
		if p.Hdr.Words[0] != p.PSN+1000 || p.Hdr.TS <= 0 || p.Hdr.TS >= sw.Now() || p.Hdr.Flags != lb.FlagTail {
			s.bad++
		}
		s.checked++
	}
	return lb.Normal
}

func TestHeaderTravelsFromSourceToDestinationToR(t *testing.T) {
	t.Parallel()
	s := &stamper{}
	e, _ := moduleEngine(t, "leafspine:2x2:4@100", s)
	run(t, e, []Flow{{ID: 1, Src: "h1", Dst: "h5", Bytes: 256 << 10, Start: 100}, {ID: 2, Src: "h6", Dst: "h2", Bytes: 256 << 10, Start: 100}})
	if s.stamped == 0 || s.checked != s.stamped || s.bad != 0 {
		t.Errorf("stamped %d headers, %d read back at the destination ToR, %d wrong", s.stamped, s.checked, s.bad)
	}
}

// pinner pins each flow's data to path Flow mod Paths at its source ToR,
// and records the links its data packets leave switches on.
type pinner struct {
	ecmp.Module
	links  map[int64][]int32 // flow<<32|psn -> links taken from switches
	paths  map[int32]int     // flow -> path ID
	failed int
}

func (m *pinner) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind == lb.Data && p.Role == lb.SrcToR {
		id := int(p.Flow) % sw.Paths(p.SrcToR, p.DstToR)
		if !sw.Pin(p, id) {
			m.failed++
		}
		m.paths[p.Flow] = id
	}
	return m.Module.Select(sw, p, c)
}

func (m *pinner) Dequeue(_ lb.Switch, p *lb.Packet, out lb.Egress) {
	if p.Kind == lb.Data {
		k := int64(p.Flow)<<32 | p.PSN
		m.links[k] = append(m.links[k], out.Link)
	}
}

func TestPinnedPathIsFollowedHopByHop(t *testing.T) {
	t.Parallel()
	m := &pinner{links: map[int64][]int32{}, paths: map[int32]int{}}
	e, _ := moduleEngine(t, "fattree:4@100", m)
	var flows []Flow
	for i := 0; i < 8; i++ { // pod 1 -> pod 4 (4 paths) and pod 1 -> pod 1 (2 paths)
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i%2), Dst: fmt.Sprintf("h%d", 13+i%4), Bytes: 16 << 10},
			Flow{ID: 100 + i, Src: fmt.Sprintf("h%d", 1+i%2), Dst: "h3", Bytes: 16 << 10})
	}
	run(t, e, flows)
	v := e.sws[0]
	tor := func(h string) int { return int(e.links[e.topo.out[h][0]].swTo) }
	if n := v.Paths(tor("h1"), tor("h16")); n != 4 {
		t.Errorf("edge1-1 to edge4-2: %d paths, want 4 (2 aggregation x 2 core switches)", n)
	}
	if n := v.Paths(tor("h1"), tor("h3")); n != 2 {
		t.Errorf("edge1-1 to edge1-2: %d paths, want 2", n)
	}
	if m.failed != 0 {
		t.Errorf("%d pins refused", m.failed)
	}
	used := map[int]bool{}
	for qi, q := range e.qps {
		id, ok := m.paths[int32(qi)]
		if !ok {
			t.Fatalf("flow %d was never pinned", q.flow.ID)
		}
		used[id] = true
		want := v.Path(tor(q.flow.Src), tor(q.flow.Dst), id)
		for psn := int64(0); psn < q.npkts; psn++ {
			got := m.links[int64(qi)<<32|psn]
			if len(got) != len(want)+1 { // the path, then the link to the host
				t.Fatalf("flow %d packet %d left switches on %v, want path %d %v", q.flow.ID, psn, got, id, want)
			}
			for h := range want {
				if got[h] != want[h].Link {
					t.Errorf("flow %d packet %d hop %d: link %d, want %d (path %d)", q.flow.ID, psn, h, got[h], want[h].Link, id)
				}
			}
		}
	}
	if len(used) != 4 {
		t.Errorf("paths used %v, want all 4", used)
	}
}

// talker sends n control packets of size bytes from leaf1 to leaf2 at
// time 0, all on path 0, and records when and what leaf2 receives.
type talker struct {
	ecmp.Module
	n, bytes int
	at       []int64
	words    []int64
	refused  bool
}

func (m *talker) Reset(sw lb.Switch) {
	if sw.Name() == "leaf1" {
		sw.Schedule(0, 0)
	}
}

func (m *talker) Tick(sw lb.Switch, _ int64) {
	to := -1
	for i := 0; i < sw.NumSwitches(); i++ {
		if sw.SwitchName(i) == "leaf2" {
			to = i
		}
	}
	for k := 0; k < m.n; k++ {
		h := lb.Header{Path: 0, Flags: lb.FlagPinned | lb.FlagReply, Words: [4]int64{int64(k)}}
		if !sw.Send(to, m.bytes, &h) {
			m.refused = true
		}
	}
	if sw.Send(to, m.bytes, &lb.Header{Path: 9, Flags: lb.FlagPinned}) {
		m.refused = true // there is no path 9 in a 2-spine fabric
	}
}

func (m *talker) Receive(sw lb.Switch, p *lb.Packet) {
	if sw.Name() == "leaf2" && p.Kind == lb.Control && p.Src == "leaf1" && p.Hdr.Flags&lb.FlagReply != 0 {
		m.at = append(m.at, sw.Now())
		m.words = append(m.words, p.Hdr.Words[0])
	}
}

// TestControlPacketsTakeBandwidth: control packets are serialised on
// every hop and queue behind each other: the k-th of a burst arrives k
// serialisation times after the first, which arrives after two
// serialisations and two propagation delays; each counts in tx bytes.
func TestControlPacketsTakeBandwidth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, bytes int }{{1, 64}, {6, 1000}, {3, 4000}} {
		t.Run(fmt.Sprintf("%dx%dB", tc.n, tc.bytes), func(t *testing.T) {
			m := &talker{n: tc.n, bytes: tc.bytes}
			e, _ := moduleEngine(t, "leafspine:2x2:2@100", m)
			leaf1, leaf2 := e.swID["leaf1"], e.swID["leaf2"]
			path := e.sws[leaf1].Path(int(leaf1), int(leaf2), 0)
			before, _ := e.PortCounters(PortKey{"leaf1", path[0].Port})
			// a flow keeps the run going while the control packets travel
			run(t, e, []Flow{{ID: 1, Src: "h3", Dst: "h4", Bytes: 64 << 10}})
			after, _ := e.PortCounters(PortKey{"leaf1", path[0].Port})
			if m.refused || len(m.at) != tc.n {
				t.Fatalf("received %d of %d (a send refused: %v)", len(m.at), tc.n, m.refused)
			}
			var first int64
			ser := int64(0)
			for _, h := range path {
				s := int64(float64(tc.bytes) * 8 / e.links[h.Link].rate)
				first += s + e.links[h.Link].delay
				ser = s
			}
			for k, at := range m.at {
				if want := first + int64(k)*ser; at < want-1 || at > want+1 || m.words[k] != int64(k) {
					t.Errorf("control packet %d (header word %d) received at %d ns, want %d", k, m.words[k], at, want)
				}
			}
			if got := after.TxBytes - before.TxBytes; got != uint64(tc.n*tc.bytes) {
				t.Errorf("leaf1's uplink sent %d bytes, want %d of control packets", got, tc.n*tc.bytes)
			}
		})
	}
}

// lastPath always takes the last candidate, and records its decisions.
type lastPath struct {
	decisions map[string]string // "flow@switch" -> next device (data only)
}

func (m *lastPath) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind == lb.Data {
		m.decisions[fmt.Sprintf("%d@%s", p.Flow, sw.Name())] = c[len(c)-1].Next
	}
	return len(c) - 1
}

// TestSwitchesRunTheirOwnModules: after SetSwitchLB leaf1 forwards with
// its own module and leaf2 keeps ECMP.
func TestSwitchesRunTheirOwnModules(t *testing.T) {
	t.Parallel()
	topo, _ := NewTopology(leafSpine(t))
	rec := &recorder{next: map[string]string{}}
	e, _ := NewPacketEngineLB(topo, DefaultConfig(), rec)
	m := &lastPath{decisions: map[string]string{}}
	if err := e.SetSwitchLB("leaf1", m); err != nil {
		t.Fatal(err)
	}
	if err := e.SetSwitchLB("leaf9", m); err == nil {
		t.Error("SetSwitchLB of a switch the fabric does not have must fail")
	}
	var flows []Flow
	for i := 0; i < 16; i++ { // leaf1 -> leaf2 and back
		flows = append(flows, Flow{ID: 2 * i, Src: fmt.Sprintf("h%d", 1+i), Dst: fmt.Sprintf("h%d", 33+i), Bytes: 64 << 10},
			Flow{ID: 2*i + 1, Src: fmt.Sprintf("h%d", 33+i), Dst: fmt.Sprintf("h%d", 1+i), Bytes: 64 << 10})
	}
	run(t, e, flows)
	if len(m.decisions) != 16 {
		t.Errorf("leaf1's module decided for %d flows, want the 16 leaving leaf1", len(m.decisions))
	}
	for k, next := range m.decisions {
		if !strings.HasSuffix(k, "@leaf1") || next != "spine2" {
			t.Errorf("leaf1's module: %s -> %s, want only leaf1, always spine2", k, next)
		}
	}
	spines := map[string]int{}
	for k, next := range rec.next {
		if !strings.HasSuffix(k, "@leaf2") {
			t.Errorf("ECMP decided %s: only leaf2 keeps it", k)
		}
		spines[next]++
	}
	if len(rec.next) != 16 || len(spines) != 2 {
		t.Errorf("leaf2's ECMP: %d decisions over %v, want 16 over both spines", len(rec.next), spines)
	}
}

// TestEngineECMPMatchesPathPrediction: the packet engine's per-hop ECMP
// (the lb/ecmp module's, which is the built-in one's) makes the choices
// Topology.Path predicts (the flow engine uses those).
func TestEngineECMPMatchesPathPrediction(t *testing.T) {
	t.Parallel()
	topo, _ := NewTopology(leafSpine(t))
	rec := &recorder{next: map[string]string{}}
	e, _ := NewPacketEngineLB(topo, DefaultConfig(), rec)
	var flows []Flow
	for i := 0; i < 32; i++ {
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", 1+i), Dst: fmt.Sprintf("h%d", 64-i), Bytes: 64 << 10})
	}
	run(t, e, flows)
	spines := map[string]int{}
	for _, f := range flows {
		hops, _ := topo.Path(f, 0)
		h := hops[1] // the source leaf: the only switch with a choice here
		if got := rec.next[fmt.Sprintf("%d@%s", f.ID, h.Device)]; got != h.Next {
			t.Errorf("flow %d at %s: engine chose %q, prediction %s", f.ID, h.Device, got, h.Next)
		}
		spines[h.Next]++
	}
	if len(spines) != 2 {
		t.Errorf("ECMP used %v", spines)
	}
}

type recorder struct {
	ecmp.Module
	next map[string]string
}

func (r *recorder) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	i := r.Module.Select(sw, p, c)
	if p.Kind == lb.Data {
		r.next[fmt.Sprintf("%d@%s", p.Flow, sw.Name())] = c[i].Next
	}
	return i
}

type broken struct{}

func (broken) Select(lb.Switch, *lb.Packet, []lb.Egress) int { return 7 }

func TestBrokenModuleFailsTheRun(t *testing.T) {
	t.Parallel()
	topo, _ := NewTopology(leafSpine(t))
	e, _ := NewPacketEngineLB(topo, DefaultConfig(), broken{})
	_, err := e.Run(context.Background(), []Flow{{ID: 1, Src: "h1", Dst: "h64", Bytes: 1 << 20}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "chose link 7 of 2 at leaf1") {
		t.Fatalf("got %v", err)
	}
}

// busy uses every hook on every packet: it pins paths, writes headers,
// meters departures and sends a control packet to the destination ToR
// every microsecond.
type busy struct {
	ecmp.Module
	departed, received int
	hdr                lb.Header // what it sends (a local's address would escape)
}

func (m *busy) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Role == lb.SrcToR && p.Kind == lb.Data {
		sw.Pin(p, int(p.PSN)%sw.Paths(p.SrcToR, p.DstToR))
	}
	return m.Module.Select(sw, p, c)
}

func (m *busy) Arrive(sw lb.Switch, p *lb.Packet, _ lb.Egress) lb.Queue {
	p.Hdr.Words[1]++
	p.Hdr.TS = sw.Now()
	return lb.Normal
}

func (m *busy) Dequeue(lb.Switch, *lb.Packet, lb.Egress) { m.departed++ }
func (m *busy) Receive(lb.Switch, *lb.Packet)            { m.received++ }

func (m *busy) Reset(sw lb.Switch) {
	if sw.Name() == "leaf1" {
		sw.Schedule(1000, 0)
	}
}

func (m *busy) Tick(sw lb.Switch, _ int64) {
	for to := 0; to < sw.NumSwitches(); to++ {
		if sw.SwitchName(to) == "leaf2" {
			m.hdr.Words[0]++
			sw.Send(to, 128, &m.hdr)
		}
	}
	sw.Schedule(1000, 0)
}

// TestModuleHooksDoNotAllocatePerPacket: a run four times as long, with
// every hook called on every packet and a control packet per microsecond,
// allocates (about) what the short one does: the allocations are the
// engine's and the run's set-up, not per packet (the test fails at one
// allocation per 200 packet departures).
func TestModuleHooksDoNotAllocatePerPacket(t *testing.T) {
	allocs := func(bytes int64) (float64, *busy) {
		m := &busy{}
		e, _ := moduleEngine(t, "leafspine:2x2:2@100", m)
		flows := []Flow{{ID: 1, Src: "h1", Dst: "h3", Bytes: bytes}, {ID: 2, Src: "h2", Dst: "h4", Bytes: bytes}}
		run(t, e, flows) // warm the pool and the tables
		return testing.AllocsPerRun(2, func() { run(t, e, flows) }), m
	}
	short, ms := allocs(1 << 20)
	long, ml := allocs(4 << 20)
	t.Logf("allocations per run: %.0f for 2 x 1 MiB (%d departures, %d control packets), %.0f for 2 x 4 MiB (%d, %d)",
		short, ms.departed, ms.received, long, ml.departed, ml.received)
	if ml.departed < 3*ms.departed || ml.received < 3*ms.received || ms.received == 0 {
		t.Fatalf("the long run is not longer: %d/%d departures, %d/%d control packets", ml.departed, ms.departed, ml.received, ms.received)
	}
	// the event queue's buckets may still grow a little in a longer run
	if extra := ml.departed - ms.departed; long-short > float64(extra)/200 {
		t.Errorf("%.0f allocations for the long run, %.0f for the short one, %d more departures: something allocates per packet",
			long, short, extra)
	}
}
