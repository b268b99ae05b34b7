package fabric

import (
	"context"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/inventory"
)

// hostProbe is a host module driven by a test: what it does is set by its
// fields, what it saw is recorded.
type hostProbe struct {
	holdEvery int64 // hold every n-th packet (psn % n == 0, psn > 0)
	holdNs    int64
	portEvery int64 // a new source port every n packets (0: never)
	pauseNs   int64 // pause the flow on its first packet for this long
	halfRate  bool  // and run it at half its line rate from then on
	paused    bool
	held      map[int64]int64 // psn -> hold
	notes     []hostlb.Packet
	words     []int64 // notes' Hdr.Words[0]
}

func (h *hostProbe) Send(host hostlb.Host, p *hostlb.Packet) int64 {
	if h.pauseNs > 0 && !h.paused {
		h.paused = true
		host.Pause(p.Flow)
		host.Schedule(h.pauseNs, int64(p.Flow))
		if h.halfRate {
			host.SetRate(p.Flow, host.LineGbps(p.Flow)/2)
		}
		return 0
	}
	if h.portEvery > 0 {
		p.SrcPort = uint16(1000 + p.PSN/h.portEvery)
	}
	if h.holdEvery > 0 && p.PSN > 0 && p.PSN%h.holdEvery == 0 && !p.Retx {
		h.held[p.PSN] = h.holdNs
		return h.holdNs
	}
	return 0
}

func (h *hostProbe) Tick(host hostlb.Host, arg int64) { host.Resume(int32(arg)) }

func (h *hostProbe) Notify(_ hostlb.Host, p *hostlb.Packet) {
	h.notes = append(h.notes, *p)
	h.words = append(h.words, p.Hdr.Words[0])
}

// torProbe forwards like ECMP and records the data packets it sees at
// their source ToR; it notifies the sender of the packet notifyPSN.
type torProbe struct {
	ecmp.Module
	at        map[int64]int64 // psn -> arrival, ns
	link      map[int64]int32 // psn -> uplink
	notifyPSN int64
	hdr       lb.Header
	notified  int64 // ns
}

func (s *torProbe) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind == lb.Data && p.Role == lb.SrcToR {
		if _, seen := s.at[p.PSN]; !seen {
			s.at[p.PSN], s.link[p.PSN] = sw.Now(), out.Link
		}
		if p.PSN == s.notifyPSN && s.notified == 0 {
			s.hdr.Words[0] = 42
			if !sw.Notify(p, 64, &s.hdr) {
				panic("Notify refused a data packet of a running flow")
			}
			s.notified = sw.Now()
		}
	}
	return lb.Normal
}

// hostRun runs one 200 KB flow h1 -> h3 across a 4-spine leaf-spine with
// h on h1 (nil: none) and a torProbe on every switch.
func hostRun(t *testing.T, h hostlb.Module, notifyPSN int64) (*torProbe, *PacketEngine, Result) {
	t.Helper()
	lab, err := inventory.Generate("leafspine:4x2:2@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	tor := &torProbe{at: map[int64]int64{}, link: map[int64]int32{}, notifyPSN: notifyPSN}
	e, err := NewPacketEngineLB(topo, DefaultConfig(), tor)
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		if err := e.SetHostLB("h1", h); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Run(context.Background(), []Flow{{ID: 1, Src: "h1", Dst: "h3", Bytes: 200_000}}, RunOptions{})
	if err != nil || res[0].Err != "" {
		t.Fatalf("run: %v %s", err, res[0].Err)
	}
	return tor, e, res[0]
}

// TestHostHoldStretchesTheGapBeforeAPacket: a held packet reaches its
// source ToR the hold later than its pacing would have it; the others keep
// line-rate gaps; the engine counts the holds.
func TestHostHoldStretchesTheGapBeforeAPacket(t *testing.T) {
	t.Parallel()
	h := &hostProbe{holdEvery: 25, holdNs: 3_000, held: map[int64]int64{}}
	tor, e, _ := hostRun(t, h, -1)
	if len(h.held) == 0 {
		t.Fatal("the module held nothing")
	}
	for psn := int64(1); psn < int64(len(tor.at)); psn++ {
		gap := tor.at[psn] - tor.at[psn-1]
		if _, held := h.held[psn]; held {
			if gap < h.holdNs {
				t.Errorf("packet %d was held %d ns but came %d ns after the one before", psn, h.holdNs, gap)
			}
		} else if gap >= h.holdNs/2 {
			t.Errorf("packet %d was not held but came %d ns after the one before", psn, gap)
		}
	}
	st := e.HostStats()
	if st.Held != uint64(len(h.held)) || st.MaxHoldNs != h.holdNs || st.HeldNs != int64(len(h.held))*h.holdNs {
		t.Errorf("HostStats %+v; the module held %d packets of %d ns", st, len(h.held), h.holdNs)
	}
}

// TestHostSourcePortMovesThePath: packets with one UDP source port share
// an uplink; new ports spread the flow over several; without a module
// the flow keeps one.
func TestHostSourcePortMovesThePath(t *testing.T) {
	t.Parallel()
	const every = 20
	h := &hostProbe{portEvery: every}
	tor, e, _ := hostRun(t, h, -1)
	byPort := map[int64]int32{}
	used := map[int32]bool{}
	for psn, li := range tor.link {
		port := psn / every
		if prev, ok := byPort[port]; ok && prev != li {
			t.Errorf("port %d: packets on links %d and %d", 1000+port, prev, li)
		}
		byPort[port] = li
		used[li] = true
	}
	if len(used) < 2 {
		t.Errorf("%d source ports used %d uplink(s) of 4", len(byPort), len(used))
	}
	if got, want := e.HostStats().PortChanges, uint64(len(byPort)); got != want {
		t.Errorf("%d port changes counted, want %d (the first one too: it leaves the QP's own port)", got, want)
	}
	plain, _, _ := hostRun(t, nil, -1)
	one := map[int32]bool{}
	for _, li := range plain.link {
		one[li] = true
	}
	if len(one) != 1 {
		t.Errorf("without a host module the flow used %d uplinks", len(one))
	}
}

// TestHostPauseAndRate: a QP paused on its first packet for 20 us and
// then run at half its line rate completes no sooner than the pause plus
// its bytes at half rate.
func TestHostPauseAndRate(t *testing.T) {
	t.Parallel()
	h := &hostProbe{pauseNs: 20_000, halfRate: true}
	_, e, r := hostRun(t, h, -1)
	_, _, plain := hostRun(t, nil, -1)
	fct, base := r.End-r.Start, plain.End-plain.Start
	halfRate := int64(200_000 * 8 / 50) // ns at 50 Gb/s
	if fct < h.pauseNs+halfRate {
		t.Errorf("FCT %d ns: want at least the 20 us pause and %d ns at half rate (line rate: %d ns)", fct, halfRate, base)
	}
	if fct > h.pauseNs+halfRate+base {
		t.Errorf("FCT %d ns: more than pause + half rate + a line-rate run (%d ns)", fct, base)
	}
	if e.HostStats().Pauses != 1 {
		t.Errorf("%d pauses counted, want 1", e.HostStats().Pauses)
	}
}

// TestSwitchNotifiesTheSender: a notification a ToR sends about a flow
// reaches the flow's sending host's module once, with the switch's ID and
// header, a link's delay or more later.
func TestSwitchNotifiesTheSender(t *testing.T) {
	t.Parallel()
	h := &hostProbe{}
	tor, e, _ := hostRun(t, h, 5)
	if len(h.notes) != 1 {
		t.Fatalf("%d notifications reached the host, want 1", len(h.notes))
	}
	n := h.notes[0]
	if id, _ := e.sws[0].SwitchID("leaf1"); n.Switch != id || n.Flow != 0 || n.Dst != "h3" || h.words[0] != 42 {
		t.Errorf("notification %+v word %d: want from leaf1 (%d) about flow 0 to h3 with word 42", n, h.words[0], id)
	}
	if e.HostStats().Notifications != 1 || tor.notified == 0 {
		t.Errorf("HostStats %+v", e.HostStats())
	}
}

// TestPassThroughHostModuleChangesNothing: a host module that lets every
// packet go as it is leaves a workload's results and counters exactly as
// without one.
func TestPassThroughHostModuleChangesNothing(t *testing.T) {
	t.Parallel()
	topo, flows := fatTreeWorkload(t, 4)
	flows = flows[:400]
	run := func(withModule bool) string {
		e := NewPacketEngine(topo, DefaultConfig())
		if withModule {
			for h := range e.hostID {
				if err := e.SetHostLB(h, &hostProbe{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		res, err := e.Run(context.Background(), flows, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fingerprint(res, e.Counters())
	}
	if a, b := run(false), run(true); a != b {
		t.Errorf("fingerprint %s without host modules, %s with pass-through ones", a, b)
	}
}
