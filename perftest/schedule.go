package perftest

import "time"

// Schedule is a point's traffic: flows with offsets from one common epoch.
// Every host agent gets the whole schedule and runs the flows it takes part in
// (as sender: a client; as receiver: a server), so a real lab and the
// emulated twin execute the same document.
type Schedule struct {
	ID    string    `json:"id"`
	Epoch time.Time `json:"epoch"`
	Flows []Flow    `json:"flows"`
}

// Flow is one perftest client/server pair moving Bytes from Src to Dst.
type Flow struct {
	ID      int    `json:"id"`
	Src     string `json:"src"`      // sending host
	Dst     string `json:"dst"`      // receiving host
	SrcDev  string `json:"src_dev"`  // sender RNIC device, e.g. mlx5_0
	DstDev  string `json:"dst_dev"`  // receiver RNIC device
	DstAddr string `json:"dst_addr"` // receiver RNIC IP the client connects to
	GIDIdx  int    `json:"gid_index"`
	Tool    string `json:"tool"` // ib_write_bw | ib_read_bw | ib_send_bw
	Bytes   int64  `json:"bytes"`
	MsgSize int64  `json:"msg_size"`
	QPs     int    `json:"qps"`
	// Port is the out-of-band TCP port (-p); unique per receiving host.
	Port int `json:"port"`
	// TClass is the GRH traffic class (--tclass) both ends' QPs send with:
	// the ToS byte of their packets, DSCP<<2 | ECN (e.g. 106: DSCP 26,
	// ECT(0)). 0 passes none: the RNIC's default, 0 unless set in
	// /sys/class/infiniband/<dev>/tc/1/traffic_class (cma_roce_tos applies
	// to RDMA-CM QPs only, which labctl's perftest runs do not use).
	TClass int `json:"tclass,omitempty"`
	// Offset is when the client starts, relative to the epoch, once every
	// flow in After has finished.
	Offset time.Duration `json:"offset_ns"`
	After  []int         `json:"after,omitempty"`
	// Group names the pattern instance, Step the all-reduce step (0-based).
	Group string `json:"group,omitempty"`
	Step  int    `json:"step,omitempty"`
}

// Iterations is the -n value: whole messages per QP covering Bytes
// (msg size x iterations x QPs >= Bytes).
func (f Flow) Iterations() int64 {
	q := int64(f.QPs)
	if q < 1 {
		q = 1
	}
	n := (f.Bytes + f.MsgSize*q - 1) / (f.MsgSize * q)
	if n < 5 { // perftest's lower bound for -n
		n = 5
	}
	return n
}

// Flow outcomes.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped" // a flow it depended on failed
)

// FlowRecord is what an agent reports for one flow, on the schedule's timeline.
type FlowRecord struct {
	FlowID  int    `json:"flow_id"`
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Bytes   int64  `json:"bytes"`
	StartNs int64  `json:"start_ns"` // unix ns, when the client really started
	EndNs   int64  `json:"end_ns"`
	// LagNs is how much later than epoch+offset the client started (0 for
	// a flow that waited on dependencies: it had no planned start).
	LagNs  int64  `json:"lag_ns,omitempty"`
	Status string `json:"status"`
	Tool   string `json:"tool"`
	Group  string `json:"group,omitempty"`
	Step   int    `json:"step,omitempty"`
	Error  string `json:"error,omitempty"`
	// Output is the client's verbatim stdout; Result its parsed table row.
	Output string    `json:"output,omitempty"`
	Result *BWResult `json:"result,omitempty"`
}

// FCT is the flow completion time.
func (r FlowRecord) FCT() time.Duration { return time.Duration(r.EndNs - r.StartNs) }

// BWResult is one row of a perftest bandwidth table.
type BWResult struct {
	Bytes       int64   `json:"bytes"`
	Iterations  int64   `json:"iterations"`
	PeakGbps    float64 `json:"bw_peak"`
	AvgGbps     float64 `json:"bw_average"`
	MsgRateMpps float64 `json:"msg_rate"`
}
