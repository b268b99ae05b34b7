package fabric

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// lastPath always takes the last candidate, and records its decisions.
type lastPath struct {
	decisions map[string]string // "flow@switch" -> next device (data only)
	timers    int
	msgs      []string
}

func (m *lastPath) Select(sw Switch, p *PacketInfo, c []Egress) int {
	if p.Data {
		m.decisions[fmt.Sprintf("%d@%s", p.QP, sw.Name())] = c[len(c)-1].Next
	}
	if p.Data && p.PSN == 0 && sw.Name() == "leaf1" {
		start := sw.Now()
		sw.After(10_000, func() {
			if sw.Now()-start == 10_000 {
				m.timers++
			}
			sw.Send("leaf2", "hello")
		})
	}
	return len(c) - 1
}

func (m *lastPath) Receive(sw Switch, from string, msg any) {
	m.msgs = append(m.msgs, fmt.Sprintf("%s->%s:%v@%d", from, sw.Name(), msg, sw.Now()))
}

func TestLBModuleSteersTrafficAndTalks(t *testing.T) {
	topo, err := NewTopology(leafSpine(t))
	if err != nil {
		t.Fatal(err)
	}
	m := &lastPath{decisions: map[string]string{}}
	e, err := NewPacketEngineLB(topo, DefaultConfig(), m)
	if err != nil {
		t.Fatal(err)
	}
	var flows []Flow
	for i := 0; i < 8; i++ {
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", 33+i), Bytes: 256 << 10})
	}
	run(t, e, flows)
	c := e.Counters()
	var viaSpine1, viaSpine2 uint64
	for k, p := range c.Ports {
		switch k.Device {
		case "spine1":
			viaSpine1 += p.TxBytes
		case "spine2":
			viaSpine2 += p.TxBytes
		}
	}
	if viaSpine1 != 0 || viaSpine2 == 0 {
		t.Errorf("the module sent everything via the last candidate (spine2): spine1 %d B, spine2 %d B", viaSpine1, viaSpine2)
	}
	if m.timers != 8 {
		t.Errorf("module timers fired on time %d times, want 8", m.timers)
	}
	// Every message goes leaf1 -> leaf2, two hops of 1 us after it was sent.
	if len(m.msgs) != 8 {
		t.Fatalf("messages: %v", m.msgs)
	}
	for _, msg := range m.msgs {
		var at int64
		if _, err := fmt.Sscanf(msg, "leaf1->leaf2:hello@%d", &at); err != nil || at < 12_000 {
			t.Errorf("message %q: want leaf1->leaf2 at >= 12 us", msg)
		}
	}
}

// TestSwitchesRunTheirOwnModules: after SetSwitchLB leaf1 forwards with
// its own module and leaf2 keeps ECMP; leaf1's messages to leaf2 find no
// module there to take them.
func TestSwitchesRunTheirOwnModules(t *testing.T) {
	topo, _ := NewTopology(leafSpine(t))
	rec := &recorder{inner: ecmp{}, next: map[string]string{}}
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
	if len(m.msgs) != 0 {
		t.Errorf("leaf2 runs ECMP, which takes no messages, yet leaf1's module received %v", m.msgs)
	}
}

// TestEngineECMPMatchesPathPrediction: the packet engine's per-hop ECMP
// makes the choices Topology.Path predicts (the flow engine uses those).
func TestEngineECMPMatchesPathPrediction(t *testing.T) {
	topo, _ := NewTopology(leafSpine(t))
	rec := &recorder{inner: ecmp{}, next: map[string]string{}}
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
	inner LB
	next  map[string]string
}

func (r *recorder) Select(sw Switch, p *PacketInfo, c []Egress) int {
	i := r.inner.Select(sw, p, c)
	if p.Data {
		r.next[fmt.Sprintf("%d@%s", p.QP, sw.Name())] = c[i].Next
	}
	return i
}

type broken struct{}

func (broken) Select(Switch, *PacketInfo, []Egress) int { return 7 }

func TestBrokenModuleFailsTheRun(t *testing.T) {
	topo, _ := NewTopology(leafSpine(t))
	e, _ := NewPacketEngineLB(topo, DefaultConfig(), broken{})
	_, err := e.Run(context.Background(), []Flow{{ID: 1, Src: "h1", Dst: "h64", Bytes: 1 << 20}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "chose link 7 of 2 at leaf1") {
		t.Fatalf("got %v", err)
	}
}
