package fabric

import (
	"testing"
	"unsafe"
)

// TestHotLayout keeps the per-packet state of the packet engine in whole
// cache lines: a link's first line holds what every packet reads, its
// RoCE (3) and control (7) queues each sit in one line, links and counter
// slots are whole lines, and a packet's forwarding fields are in its first
// line (pswitch.go, pcounters.go, pevent.go); and the flow engine's link
// state in two lines, its recompute state first (flowlink.go).
func TestHotLayout(t *testing.T) {
	t.Parallel()
	var l plink
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"plink size mod 64", unsafe.Sizeof(l) % 64, 0},
		{"queues' offset", unsafe.Offsetof(l.q), 64},
		{"fifo size", unsafe.Sizeof(fifo{}), 48},
		{"RoCE queue's line", (unsafe.Offsetof(l.q) + 3*unsafe.Sizeof(fifo{})) % 64, 16},
		{"control queue's line", (unsafe.Offsetof(l.q) + 7*unsafe.Sizeof(fifo{})) % 64, 16},
		{"inBytes offset mod 64", unsafe.Offsetof(l.inBytes) % 64, 0},
		{"counter slot size", unsafe.Sizeof(lctr{}), 64},
		{"packet size", unsafe.Sizeof(packet{}), 128},
		{"packet's hot fields end", unsafe.Offsetof(packet{}.hdr), 56},
		// the flow engine's link: its recompute state, then its first flows
		{"flowLink size", unsafe.Sizeof(flowLink{}), 128},
		{"flowLink flows' offset", unsafe.Offsetof(flowLink{}.refs), 64},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
