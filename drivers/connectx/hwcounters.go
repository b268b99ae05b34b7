package connectx

import (
	"fmt"
	"path"
	"strconv"
)

// The mlx5 RDMA hardware counters (hardware-surfaces reference, section
// 2.8): one file per counter under
// /sys/class/infiniband/<dev>/ports/1/hw_counters, content "%llu\n",
// cumulative. Which files exist depends on the firmware's capability
// bits, so a reader must expect some to be absent. In the driver's group
// order:
func hwCounterNames() []string {
	return []string{
		// basic
		"rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer",
		"out_of_sequence",
		// retransmission
		"duplicate_request", "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err",
		// extended errors
		"resp_local_length_error", "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request",
		"req_remote_access_errors", "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error",
		// RoCE acceleration
		"roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans",
		// congestion (port level)
		"rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent",
		"rx_icrc_encapsulated",
	}
}

// HWCountersDir is the hw_counters directory of an RNIC's port 1.
func HWCountersDir(dev string) string { return "/sys/class/infiniband/" + dev + "/ports/1/hw_counters" }

// hwCounterFiles are the files of hwCounterNames, in order.
func hwCounterFiles(dev string) []string {
	names := hwCounterNames()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = path.Join(HWCountersDir(dev), n)
	}
	return out
}

// HWCountersCommand reads every counter with one cat, which serves any
// firmware (see parseCat); ParseHWCounters sorts the output out.
func HWCountersCommand(dev string) string { return catCommand(hwCounterFiles(dev)) }

// FormatHWCounter is a counter file's content.
func FormatHWCounter(v uint64) string { return strconv.FormatUint(v, 10) + "\n" }

// ParseHWCounters reads the output of HWCountersCommand. The result maps
// counter names (the file names) to values; absent counters are left out.
// Any other complaint on stderr (permission denied: not root on a kernel
// that restricts the files) is an error naming the device.
func ParseHWCounters(dev, stdout, stderr string) (map[string]uint64, error) {
	vals, err := parseCat("hw_counters of "+dev, hwCounterFiles(dev), stdout, stderr)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(vals))
	for f, s := range vals {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hw_counters of %s: %s: %q is not a counter", dev, path.Base(f), s)
		}
		out[path.Base(f)] = v
	}
	return out, nil
}
