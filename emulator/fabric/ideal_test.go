package fabric

import (
	"fmt"
	"testing"
)

// TestLoneFlowSlowdownIsOne: a flow alone on an idle leaf-spine completes
// (at its sender, on the last ACK) at its ideal FCT, the one reports divide
// by, so its slowdown is 1: the ideal includes the base round trip, as the
// measured FCT does. Both transports, sizes from one byte to many packets.
func TestLoneFlowSlowdownIsOne(t *testing.T) {
	t.Parallel()
	topo := generated(t, "leafspine:2x2:2@100")
	for _, transport := range []string{"gbn", "irn"} {
		for _, bytes := range []int64{1, 1000, 4096, 5000, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%dB", transport, bytes), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Transport = transport
				f := Flow{ID: 1, Src: "h1", Dst: "h4", Bytes: bytes} // leaf, spine, leaf: 4 links
				ideal, err := topo.IdealFCT(f, cfg)
				if err != nil {
					t.Fatal(err)
				}
				r := run(t, NewPacketEngine(topo, cfg), []Flow{f})[0]
				if got := r.End - r.Start; got < ideal-2 || got > ideal+2 {
					t.Errorf("FCT %d ns, ideal %d ns: slowdown %.4f, want 1 (within 2 ns)", got, ideal, float64(got)/float64(ideal))
				}
				// The one-way time is a round trip short: 4 us at least.
				if ideal < 4*1000*2 {
					t.Errorf("ideal %d ns does not include the 8 us base round trip", ideal)
				}
			})
		}
	}
}
