package perftest

import "time"

// Schedule is a point's traffic: flows with offsets from one common epoch.
// The run archive keeps a point's whole schedule; each host agent gets its
// own part (ForHosts): the flows it takes part in (as sender: a client; as
// receiver: a server), with the point's ID and epoch, so the bytes sent to
// hosts grow with the flows, not with hosts x flows.
type Schedule struct {
	ID    string    `json:"id"`
	Epoch time.Time `json:"epoch"`
	// Host is the host a part is for ("" in a point's whole schedule).
	Host string `json:"host,omitempty"`
	// PointFlows is how many flows the whole point has (set in a host's
	// part): an emulated lab's twin, which gathers a point's flows from
	// the hosts that send them, knows from it when it has them all.
	PointFlows int `json:"point_flows,omitempty"`
	// HostFlows is how many flows a host's part holds (set by ForHosts,
	// before Flows in the JSON): the agent sizes its list once instead of
	// growing it flow by flow.
	HostFlows int    `json:"host_flows,omitempty"`
	Flows     []Flow `json:"flows"`
}

// ForHosts splits s into one part per host of hosts: the flows the host
// sends or receives, in s's order, with s's ID and epoch. A host without
// flows gets an empty part. Flows between hosts not in hosts are in no
// part.
func (s *Schedule) ForHosts(hosts []string) map[string]*Schedule {
	parts := make(map[string]*Schedule, len(hosts))
	for _, h := range hosts {
		parts[h] = &Schedule{ID: s.ID, Epoch: s.Epoch, Host: h, PointFlows: len(s.Flows)}
	}
	// Counted first, then filled: a point's flows are some hundred
	// thousand, and lists grown by append would be allocated several times
	// over.
	each := func(f *Flow, do func(*Schedule)) {
		if p, ok := parts[f.Src]; ok {
			do(p)
		}
		if p, ok := parts[f.Dst]; ok && f.Dst != f.Src {
			do(p)
		}
	}
	for i := range s.Flows {
		each(&s.Flows[i], func(p *Schedule) { p.HostFlows++ })
	}
	for _, p := range parts {
		p.Flows = make([]Flow, 0, p.HostFlows)
	}
	for i := range s.Flows {
		each(&s.Flows[i], func(p *Schedule) { p.Flows = append(p.Flows, s.Flows[i]) })
	}
	return parts
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
