package emulator

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
)

// The twin's host-port counters reach the mlx5 names ethtool -S prints:
// pause time in both directions in microseconds, and rx_prioN_marked from
// the CE-marked packets the RNIC received (not marks made on its egress).
func TestRNICCountersFromTheTwin(t *testing.T) {
	var pc fabric.PortCounters
	pc.PFCRx[3], pc.PauseRxNs[3], pc.PauseTxNs[3] = 4, 12_345, 6_789
	pc.ECNReceived[3], pc.Queues[3].ECNMarked = 17, 99
	c := rnicCounters(pc)
	if c.PauseRx[3] != 4 || c.PauseRxDurationUs[3] != 12 || c.PauseTxDurationUs[3] != 6 {
		t.Errorf("pause: frames %d, rx %d us, tx %d us; want 4, 12, 6", c.PauseRx[3], c.PauseRxDurationUs[3], c.PauseTxDurationUs[3])
	}
	if c.ECNMarked[3] != 17 {
		t.Errorf("rx_prio3_marked = %d, want the 17 CE-marked packets received", c.ECNMarked[3])
	}
}
