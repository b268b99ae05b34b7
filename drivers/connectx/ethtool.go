package connectx

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// Stat is one `ethtool -S` counter.
type Stat struct {
	Name  string
	Value uint64
}

// RNICCounters are the port counters of an RNIC the emulator knows.
type RNICCounters struct {
	RxBytes, TxBytes, RxPkts, TxPkts uint64 // RDMA traffic (vport rdma unicast)
	RxDiscards, TxDiscards           uint64
	PrioRxBytes, PrioTxBytes         [8]uint64
	PrioRxPkts, PrioTxPkts           [8]uint64
	PauseRx, PauseTx                 [8]uint64 // PFC frames per priority
	PauseRxDurationUs                [8]uint64
	PauseTxDurationUs                [8]uint64
	ECNMarked                        [8]uint64
}

// MLX5Stats lists the RoCE-relevant mlx5 counters in the driver's group
// order: vport RDMA, physical port, then per priority. (RoCE traffic does
// not show in the netdev's own rx_bytes/tx_bytes.)
func MLX5Stats(c RNICCounters) []Stat {
	s := []Stat{
		{"rx_vport_rdma_unicast_packets", c.RxPkts}, {"rx_vport_rdma_unicast_bytes", c.RxBytes},
		{"tx_vport_rdma_unicast_packets", c.TxPkts}, {"tx_vport_rdma_unicast_bytes", c.TxBytes},
		{"rx_packets_phy", c.RxPkts}, {"tx_packets_phy", c.TxPkts}, {"rx_bytes_phy", c.RxBytes}, {"tx_bytes_phy", c.TxBytes},
		{"rx_discards_phy", c.RxDiscards}, {"tx_discards_phy", c.TxDiscards},
	}
	var pr, tr uint64
	for p := 0; p < 8; p++ {
		pr, tr = pr+c.PauseRx[p], tr+c.PauseTx[p]
	}
	s = append(s, Stat{"rx_pause_ctrl_phy", pr}, Stat{"tx_pause_ctrl_phy", tr})
	for p := 0; p < 8; p++ {
		n := func(f string) string { return fmt.Sprintf(f, p) }
		s = append(s,
			Stat{n("rx_prio%d_bytes"), c.PrioRxBytes[p]}, Stat{n("rx_prio%d_packets"), c.PrioRxPkts[p]},
			Stat{n("tx_prio%d_bytes"), c.PrioTxBytes[p]}, Stat{n("tx_prio%d_packets"), c.PrioTxPkts[p]},
			Stat{n("rx_prio%d_pause"), c.PauseRx[p]}, Stat{n("rx_prio%d_pause_duration"), c.PauseRxDurationUs[p]},
			Stat{n("tx_prio%d_pause"), c.PauseTx[p]}, Stat{n("tx_prio%d_pause_duration"), c.PauseTxDurationUs[p]},
			Stat{n("rx_prio%d_pause_transition"), c.PauseRx[p]}, Stat{n("rx_prio%d_marked"), c.ECNMarked[p]},
		)
	}
	return s
}

// FormatEthtoolStats prints `ethtool -S`: a header, then five spaces,
// name, colon, value per line.
func FormatEthtoolStats(w io.Writer, stats []Stat) error {
	b := bufio.NewWriter(w)
	b.WriteString("NIC statistics:\n")
	for _, s := range stats {
		fmt.Fprintf(b, "     %s: %d\n", s.Name, s.Value)
	}
	return b.Flush()
}

// EthtoolStatsCommand prints netdev's `ethtool -S` counters.
func EthtoolStatsCommand(netdev string) string { return "ethtool -S " + sshdrv.Quote(netdev) }

// ParseEthtoolStats reads `ethtool -S` output into values and their order.
func ParseEthtoolStats(out string) (map[string]uint64, []string, error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "NIC statistics:" {
		return nil, nil, fmt.Errorf("ethtool -S: output does not start with \"NIC statistics:\"")
	}
	vals := map[string]uint64{}
	var order []string
	for i, l := range lines[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			return nil, nil, fmt.Errorf("ethtool -S: line %d: %q", i+2, l)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("ethtool -S: line %d: %s: %w", i+2, k, err)
		}
		if _, dup := vals[k]; !dup {
			order = append(order, k)
		}
		vals[k] = n
	}
	return vals, order, nil
}
