package emulator

import (
	"path"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
)

// An emulated host serves its RNICs' RDMA hw_counters
// (/sys/class/infiniband/<dev>/ports/1/hw_counters/<name>) from the twin's
// counters of its port, through the connectx format, when they are read.
//
// A counter is served only when the twin can say its value truthfully:
//   - from a twin counter of the same meaning, when the engine keeps the
//     transport counters (the packet engine does, the flow engine not), or
//   - as 0 when the twin never produces the event (atomics, RNR NAKs,
//     completion errors, ICRC, slow restart).
//
// Counters of events the twin does produce but does not count (requests
// received, implied NAKs, adaptive retransmission) are absent, as on
// firmware without the capability, so no report mistakes a zero for a
// measurement.
func twinHWCounters(pc fabric.PortCounters, transport bool) map[string]uint64 {
	m := map[string]uint64{
		"rx_atomic_requests": 0, "rnr_nak_retry_err": 0, "out_of_buffer": 0,
		"resp_local_length_error": 0, "resp_cqe_error": 0, "req_cqe_error": 0, "req_remote_invalid_request": 0,
		"req_remote_access_errors": 0, "resp_remote_access_errors": 0, "resp_cqe_flush_error": 0, "req_cqe_flush_error": 0,
		"roce_slow_restart": 0, "roce_slow_restart_cnps": 0, "roce_slow_restart_trans": 0, "rx_icrc_encapsulated": 0,
	}
	if !transport {
		return m
	}
	var ecnRx uint64
	for _, n := range pc.ECNReceived {
		ecnRx += n
	}
	m["out_of_sequence"] = pc.OutOfSequence       // responder: data packets that arrived out of order
	m["duplicate_request"] = pc.DuplicateRequests // responder: data packets already accepted
	m["packet_seq_err"] = pc.NAKReceived          // requester: sequence-error NAKs received
	m["local_ack_timeout_err"] = pc.AckTimeouts   // requester: retransmission timer expiries
	m["np_ecn_marked_roce_packets"] = ecnRx       // notification point: CE-marked RoCE packets received
	m["np_cnp_sent"] = pc.CNPSent                 // notification point: CNPs this RNIC sent
	m["rp_cnp_handled"] = pc.CNPHandled           // reaction point: CNPs that cut this RNIC's rate
	m["rp_cnp_ignored"] = pc.CNPIgnored           // reaction point off: CNPs received and ignored
	return m
}

// hwReader reads the hw_counters files one command names: the twin's
// counters of a device are fetched once per command (a `cat` of every
// counter file is one look at the twin, not one per file).
type hwReader struct {
	h     *host
	byDev map[string]map[string]uint64
}

// hwCounter returns the content of a hw_counters file of one of the host's
// RNICs, or false when p is no such file (or the counter is absent).
func (r *hwReader) hwCounter(p string) ([]byte, bool) {
	h := r.h
	p = path.Clean("/" + p)
	dir, name := path.Split(p)
	dev, ok := strings.CutPrefix(strings.TrimSuffix(dir, "/"), "/sys/class/infiniband/")
	if !ok {
		return nil, false
	}
	dev, ok = strings.CutSuffix(dev, "/ports/1/hw_counters")
	if r, found := h.rnic(dev); !ok || !found || r.Device != dev {
		return nil, false
	}
	m, ok := r.byDev[dev]
	if !ok {
		m = twinHWCounters(h.lab.twin.HostCounters(h.inv.Name, dev))
		if r.byDev == nil {
			r.byDev = map[string]map[string]uint64{}
		}
		r.byDev[dev] = m
	}
	v, ok := m[name]
	if !ok {
		return nil, false
	}
	return []byte(connectx.FormatHWCounter(v)), true
}
