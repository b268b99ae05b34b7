package emulator

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
)

// The twin's host-port counters reach the mlx5 names ethtool -S prints:
// pause time in both directions in microseconds, and rx_prioN_marked from
// the CE-marked packets the RNIC received (not marks made on its egress);
// received bytes per priority from the packet engine, all on priority 3
// from the flow engine, which counts none per priority.
func TestRNICCountersFromTheTwin(t *testing.T) {
	var pc fabric.PortCounters
	pc.PFCRx[3], pc.PauseRxNs[3], pc.PauseTxNs[3] = 4, 12_345, 6_789
	pc.ECNReceived[3], pc.Queues[3].ECNMarked = 17, 99
	pc.RxBytes, pc.RxPkts = 1000, 10
	pc.RxPrioBytes[0], pc.RxPrioPkts[0], pc.RxPrioBytes[7], pc.RxPrioPkts[7] = 900, 8, 100, 2
	c := rnicCounters(pc, true)
	if c.PauseRx[3] != 4 || c.PauseRxDurationUs[3] != 12 || c.PauseTxDurationUs[3] != 6 {
		t.Errorf("pause: frames %d, rx %d us, tx %d us; want 4, 12, 6", c.PauseRx[3], c.PauseRxDurationUs[3], c.PauseTxDurationUs[3])
	}
	if c.ECNMarked[3] != 17 {
		t.Errorf("rx_prio3_marked = %d, want the 17 CE-marked packets received", c.ECNMarked[3])
	}
	if c.PrioRxBytes[0] != 900 || c.PrioRxPkts[7] != 2 || c.PrioRxBytes[3] != 0 {
		t.Errorf("packet engine: rx per priority %v %v; want 900 B on 0, 2 packets on 7, none on 3", c.PrioRxBytes, c.PrioRxPkts)
	}
	if c := rnicCounters(pc, false); c.PrioRxBytes[3] != 1000 || c.PrioRxPkts[3] != 10 {
		t.Errorf("flow engine: rx_prio3 %d B %d packets, want all 1000 and 10", c.PrioRxBytes[3], c.PrioRxPkts[3])
	}
}
