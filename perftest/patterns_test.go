package perftest

import (
	"fmt"
	"testing"
	"time"
)

func TestPermutation(t *testing.T) {
	hosts, _ := rackedHosts(3, 5)
	seen := map[string]bool{}
	for seed := int64(1); seed <= 20; seed++ {
		fl, err := Permutation(PermutationParams{Hosts: hosts, Bytes: 8 << 20, Seed: seed, Tool: "ib_write_bw"})
		if err != nil {
			t.Fatal(err)
		}
		partner := map[string]string{}
		for _, f := range fl {
			if f.Offset != 0 || f.Bytes != 8<<20 || f.MsgSize*f.Iterations()*int64(f.QPs) < f.Bytes {
				t.Errorf("bad flow %+v", f)
			}
			partner[f.Src] = f.Dst
		}
		checkDerangement(t, partner, len(hosts))
		seen[fmt.Sprint(partner)] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 seeds gave only %d different permutations", len(seen))
	}
	c, _ := CDFByName("websearch")
	a, _ := Permutation(PermutationParams{Hosts: hosts, CDF: c, Seed: 9, Tool: "ib_write_bw"})
	b, _ := Permutation(PermutationParams{Hosts: hosts, CDF: c, Seed: 9, Tool: "ib_write_bw"})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed, different permutation")
	}
	sizes := map[int64]bool{}
	for _, f := range a {
		sizes[f.Bytes] = true
	}
	if len(sizes) < 5 {
		t.Errorf("sizes from a CDF should differ: %v", sizes)
	}
	if _, err := Permutation(PermutationParams{Hosts: hosts[:1], Bytes: 1, Tool: "ib_write_bw"}); err == nil {
		t.Error("one host cannot be permuted")
	}
}

// TestBurstOverBackgroundFLB: the defaults are FLB's HoL-blocking
// experiment on its 40 Gb/s testbed: 3 long flows from one rack to the
// other, then 40 bursts of 14 x 64 KB to the receiver at line rate.
func TestBurstOverBackgroundFLB(t *testing.T) {
	hosts, racks := rackedHosts(2, 17)
	fl, err := Burst(BurstParams{Hosts: hosts, Racks: racks, LinkGbps: 40, Start: DefaultBurstStart, Tool: "ib_write_bw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != 3+40*14 {
		t.Fatalf("%d flows, want 3 + 40 x 14", len(fl))
	}
	recv := "r1h0"                                 // the first host of the last rack
	interval := time.Duration(14 * 65536 * 8 / 40) // ns at 40 Gb/s
	burstAt := map[time.Duration]int{}
	ports := map[string]map[int]bool{}
	for _, f := range fl {
		if ports[f.Dst] == nil {
			ports[f.Dst] = map[int]bool{}
		}
		if ports[f.Dst][f.Port] {
			t.Errorf("port %d used twice on %s", f.Port, f.Dst)
		}
		ports[f.Dst][f.Port] = true
		if f.Step == 0 {
			if f.Offset != 0 || f.Bytes != 250_000_000 || racks[f.Src] != "leaf0" || racks[f.Dst] != "leaf1" {
				t.Errorf("background flow %+v must cross from leaf0 to leaf1 at 0", f)
			}
			continue
		}
		want := 40*time.Millisecond + time.Duration(f.Step-1)*interval
		if f.Offset != want || f.Dst != recv || f.Bytes != 64<<10 || racks[f.Src] != "leaf1" {
			t.Errorf("burst flow %+v: want offset %v to %s from the receiver's rack", f, want, recv)
		}
		burstAt[f.Offset]++
	}
	if fl[2].Dst != recv {
		t.Errorf("the last background flow goes to the burst receiver (FLB's f2 to R2), got %s", fl[2].Dst)
	}
	if len(burstAt) != 40 {
		t.Errorf("%d distinct burst times, want 40", len(burstAt))
	}
	for at, n := range burstAt {
		if n != 14 {
			t.Errorf("burst at %v has %d flows, want 14 synchronized", at, n)
		}
	}
	// Too few hosts: a clear count.
	small, sr := rackedHosts(2, 3)
	if _, err := Burst(BurstParams{Hosts: small, Racks: sr, LinkGbps: 40, Tool: "ib_write_bw"}); err == nil {
		t.Error("6 hosts cannot hold 3 background flows and 14 burst senders")
	}
}

// TestPortsStayInRange: a host receiving more flows than there are ports
// above the base gets ports reused in turn, never one past 65535; a base
// port outside 1024..65535 is refused.
func TestPortsStayInRange(t *testing.T) {
	const n = 60000 // > 65536 - DefaultBasePort
	recv := Endpoint{Host: "r", Dev: "mlx5_0", IP: "10.0.0.1"}
	senders := make([]Endpoint, n)
	for i := range senders {
		senders[i] = Endpoint{Host: fmt.Sprintf("s%d", i), Dev: "mlx5_0", IP: "10.0.1.1"}
	}
	incast, err := Incast(IncastParams{Senders: senders, Receiver: recv, Bytes: 4096, MsgSize: 4096, Tool: "ib_write_bw"})
	if err != nil {
		t.Fatal(err)
	}
	p := PoissonParams{Hosts: []Endpoint{senders[0], recv}, Tool: "ib_write_bw", MsgSize: 4096}
	all := make([]arrival, n)
	for i := range all {
		all[i] = arrival{t: float64(i), src: 0, dst: 1, size: 4096}
	}
	workload, err := p.flows(all)
	if err != nil {
		t.Fatal(err)
	}
	for name, flows := range map[string][]Flow{"incast": incast, "workload": workload} {
		for k, f := range flows {
			if want := DefaultBasePort + k%(65536-DefaultBasePort); f.Port != want || f.Port > 65535 {
				t.Fatalf("%s: flow %d to %s on port %d, want %d", name, k, f.Dst, f.Port, want)
			}
		}
	}
	for _, base := range []int{80, 65536} {
		if _, err := Incast(IncastParams{Senders: senders[:1], Receiver: recv, Bytes: 1, MsgSize: 1, Tool: "ib_write_bw", BasePort: base}); err == nil {
			t.Errorf("base port %d: want an error", base)
		}
	}
}
