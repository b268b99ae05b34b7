package fabric

import "context"

// Engine simulates traffic over a Topology. Implementations: the flow-level
// engine (max-min sharing over ECMP-hashed paths) and, later, a packet-level
// engine. Both must be deterministic for a seed and report the same Results
// and Counters.
type Engine interface {
	// Run simulates flows until all have finished or ctx is done. Sim time
	// starts at 0 for each Run; Flow.Start and Result times are relative to
	// it. If opt.OnSample is set, it is called every opt.SampleEvery ns of
	// sim time (and once at the end) with the engine's cumulative counters.
	Run(ctx context.Context, flows []Flow, opt RunOptions) ([]Result, error)
	// Counters returns a copy of the cumulative counters (they survive Runs).
	Counters() *Counters
	// PortCounters is Counters of one port, without copying the others.
	PortCounters(k PortKey) (PortCounters, bool)
	// ClearWatermarks restarts every queue's WatermarkBytes at its current
	// depth and sets its ClearedTxPkts to its TxPkts, as a switch's
	// watermark clear (SONiC's sonic-clear queue watermark) does.
	ClearWatermarks()
}

// Flow is one transfer between two hosts' RNICs.
type Flow struct {
	ID       int
	Src, Dst string // host names
	Bytes    int64
	Start    int64 // ns: earliest start, relative to the Run
	After    []int // flow IDs that must finish before this one starts
	// Priority is the 802.1p priority the sender's NIC sends on; 0 means
	// 3 (RoCE's) unless TOS is set. 7 is the engine's control priority:
	// data asking for it gets 6.
	Priority int
	// TOS is the ToS byte of the flow's data packets, DSCP<<2 | ECN (e.g.
	// 106: DSCP 26, ECT(0)); switches with a DSCP map classify by it, and
	// a non-ECT flow is never marked. 0: unknown, the packets keep
	// Priority and are ECN-capable.
	TOS int
}

// Result is a finished (or failed) flow.
type Result struct {
	ID         int
	Start, End int64 // ns, relative to the Run
	Bytes      int64
	Path       []string // devices traversed, src host first
	Err        string   // non-empty if the flow could not complete
}

// RunOptions tune a Run.
type RunOptions struct {
	SampleEvery int64 // ns of sim time between OnSample calls; 0 = none
	OnSample    func(now int64, c *Counters)
}

// PortKey names a device port: a switch port or a host RNIC (Port = device).
type PortKey struct{ Device, Port string }

// Counters are cumulative per-port counters, what gNMI and ethtool -S expose.
type Counters struct {
	Ports map[PortKey]*PortCounters
	// Transport: the engine keeps the RNIC transport counters (CE-marked
	// arrivals, CNPs, NAKs, timeouts, out-of-sequence, duplicates,
	// retransmits). The flow engine does not,
	// and leaves them 0 without meaning.
	Transport bool
	// Schemes are the load-balancing modules' counters by switch name
	// (packet engine; pschemes.go); nil when no module counts.
	Schemes map[string]SchemeCounts
}

// PortCounters are one port's counters. Tx/Rx are from the port's view.
type PortCounters struct {
	TxBytes, RxBytes uint64
	TxPkts, RxPkts   uint64
	// RxPrioBytes and RxPrioPkts split the received traffic by the
	// priority it arrived on (packet engine; a transport counter).
	RxPrioBytes, RxPrioPkts [8]uint64
	Drops                   uint64
	ECNMarked               uint64
	PFCTx, PFCRx            [8]uint64 // PAUSE frames per priority
	PauseRxNs               [8]uint64 // time paused by the peer, per priority
	PauseTxNs               [8]uint64 // time this port held its peer paused (XOFF to XON), per priority
	Queues                  [8]QueueCounters
	// RNIC counters (host ports; packet engine only)
	ECNReceived         [8]uint64 // CE-marked data packets received, per priority
	CNPSent, CNPHandled uint64
	CNPIgnored          uint64 // CNPs received with the reaction point off
	OutOfSequence       uint64 // data packets that arrived out of order
	Retransmits         uint64 // data packets sent again (go-back-N)
	NAKReceived         uint64 // sequence-error NAKs this sender received
	AckTimeouts         uint64 // times this sender's retransmission timer expired
	DuplicateRequests   uint64 // data packets this receiver had already accepted
}

// QueueCounters are one egress queue's counters.
type QueueCounters struct {
	DepthBytes     uint64 // current
	WatermarkBytes uint64 // peak since the last ClearWatermarks (or the start)
	TxBytes        uint64
	TxPkts         uint64
	Drops          uint64
	ECNMarked      uint64
	ClearedTxPkts  uint64 // TxPkts at the last ClearWatermarks
}

// Clone deep-copies c.
func (c *Counters) Clone() *Counters {
	out := &Counters{Ports: make(map[PortKey]*PortCounters, len(c.Ports)), Transport: c.Transport}
	for k, v := range c.Ports {
		cp := *v
		out.Ports[k] = &cp
	}
	return out
}
