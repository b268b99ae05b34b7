package inventory

import (
	"strings"
	"testing"
)

func TestIdealFCT(t *testing.T) {
	l100 := PathLink{Gbps: 100, DelayNs: 1000}
	for _, tc := range []struct {
		name  string
		bytes int64
		path  []PathLink
		want  int64
	}{
		// 1 MB: 245 packets, (1e6 + 245*82) B at 100 Gb/s = 81607.2 ns; the
		// first packet (4096+82 B) is stored and forwarded by 3 switches
		// (3 x 334.24 ns), the others follow back to back; 4 links of 1 us
		// there and back (8 us); the 64 B ACK serialised on the 4 links back
		// (4 x 5.12 ns).
		{"leaf-spine-leaf", 1_000_000, []PathLink{l100, l100, l100, l100}, 90630},
		// One 4096 B packet (4178 B on the wire) over two links: once
		// serialised at the slowest (25 Gb/s: 1336.96 ns), then once more at
		// the one switch on the 100 Gb/s link (334.24 ns), plus 2 x 1 us
		// there and 2 x 1 us back, and the ACK at 100 and 25 Gb/s (5.12 +
		// 20.48 ns).
		{"slowest link serialises", 4096, []PathLink{{Gbps: 25, DelayNs: 1000}, l100}, 5696},
		// One 1000 B packet, 2 links: 1082 B at 100 Gb/s (86.56 ns) on each,
		// 4 us of propagation, 2 ACKs of 5.12 ns. The ns-3 code bases' base
		// RTT would charge a full MTU payload per link (2 x 327.68 ns).
		{"one small packet", 1000, []PathLink{l100, l100}, 4183},
		{"no path", 10, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IdealFCT(tc.bytes, DefaultMTU, DefaultHeaderBytes, tc.path); got != tc.want {
				t.Errorf("IdealFCT = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestShortestPath(t *testing.T) {
	lab, err := Resolve("leafspine:2x2:2@100")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, dst string
		hops     int
		err      string
	}{
		{"h1", "h2", 2, ""}, // same leaf
		{"h1", "h4", 4, ""}, // leaf, spine, leaf
		{"h1", "h1", 0, "itself"},
		{"h1", "leaf1", 0, "not a host"},
	} {
		p, err := lab.ShortestPath(tc.src, tc.dst)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s-%s: err %v, want %q", tc.src, tc.dst, err, tc.err)
			}
			continue
		}
		if err != nil || len(p) != tc.hops {
			t.Errorf("%s-%s: %d links, err %v; want %d", tc.src, tc.dst, len(p), err, tc.hops)
		}
		for _, l := range p {
			if l.Gbps != 100 || l.DelayNs != 1000 {
				t.Errorf("%s-%s: link %+v", tc.src, tc.dst, l)
			}
		}
	}
	// A host never forwards: h3 is cabled to h2 alone, so h1 cannot reach
	// it; h1 and h2 are cabled directly (no delay declared: the default).
	hostChain := &Lab{Name: "chain",
		Switches: []Switch{{Name: "s", Ports: []Port{{Name: "1", SpeedGbps: 10}, {Name: "2", SpeedGbps: 10}}}},
		Hosts: []Host{{Name: "h1", RNICs: []RNIC{{Device: "m", SpeedGbps: 10}, {Device: "n", SpeedGbps: 10}}},
			{Name: "h2", RNICs: []RNIC{{Device: "m", SpeedGbps: 10}, {Device: "n", SpeedGbps: 10}}},
			{Name: "h3", RNICs: []RNIC{{Device: "m", SpeedGbps: 10}}}},
		Links: []Link{{A: LinkEnd{"h1", "m"}, B: LinkEnd{"h2", "m"}}, {A: LinkEnd{"h2", "n"}, B: LinkEnd{"h3", "m"}},
			{A: LinkEnd{"h1", "n"}, B: LinkEnd{"s", "1"}}, {A: LinkEnd{"s", "2"}, B: LinkEnd{"h2", "n"}}}}
	if p, err := hostChain.ShortestPath("h1", "h3"); err == nil {
		t.Errorf("h1-h3 through host h2: %+v", p)
	}
	if p, err := hostChain.ShortestPath("h1", "h2"); err != nil || len(p) != 1 || p[0].DelayNs != DefaultLinkDelayNs {
		t.Errorf("h1-h2: %+v, %v (want the direct cable with the default delay)", p, err)
	}
}
