package fabric

import "github.com/labctl/labctl/inventory"

// Config holds the twin's fabric parameters. Defaults follow the papers'
// ns-3 settings where they give one (seeds digest: 100 Gb/s, 1 us links,
// 12 MB switch buffers, DCQCN ECN thresholds 100 KB / 400 KB / 0.2).
type Config struct {
	Seed int64
	// MTU is the payload per packet.
	MTU int
	// HeaderBytes is the wire overhead per packet (default
	// inventory.DefaultHeaderBytes; RETH on the first packet of a message
	// is ignored).
	HeaderBytes int
	// SwitchConfig holds the switches' settings (the packet engine keeps
	// one per switch; see PacketEngine.ConfigureSwitch).
	SwitchConfig
	// DropBytes is the depth at which a lossy queue drops (dynamic
	// threshold alpha=1 with half the buffer free: BufferBytes/2).
	DropBytes int64

	// FlowQuantumNs is the flow engine's recompute quantum: arrivals and
	// completions within one quantum share one max-min recomputation at
	// its end (a flow arriving in between starts at once on the capacity
	// its path has left). 0 means the default (1 us); negative recomputes
	// at every arrival and completion (exact, slow on large fabrics).
	// docs/fabric-twin.md gives its effect on speed and error.
	FlowQuantumNs int64

	// Packet engine only.
	// AckEvery coalesces ACKs: one per N in-order packets (and the last).
	AckEvery int
	// LB names the switches' load-balancing scheme, with its parameters
	// (from the switch image's manifest), made by Modules (the caller's
	// registry, package lb/schemes); "" is the engine's built-in ECMP.
	LB       string
	LBParams map[string]string
	Modules  Modules
	// HostLB names the hosts' load-balancing module (the RNIC profile's
	// host_lb), with its parameters, made by HostModules (package
	// hostlb/hostschemes) for every host; "" runs none.
	HostLB       string
	HostLBParams map[string]string
	HostModules  HostModules
	// ReorderQueues is how many reorder queues each switch egress port
	// offers modules (lb.Switch.AllocQueue); 0 or less: no limit.
	ReorderQueues int
	// ReorderTimeoutNs is how long a paused reorder queue waits before it
	// resumes anyway, unless the module gives its own timeout.
	ReorderTimeoutNs int64
	// Transport is "gbn" (go-back-N, lossless RoCE; default) or "irn"
	// (selective repeat with BDP-limited in-flight packets).
	Transport string
	// RTONs is the go-back-N retransmission timeout.
	RTONs int64
	// NackIntervalNs: a go-back-N receiver that keeps getting packets
	// beyond the one it expects NACKs that PSN again once this long has
	// passed since its last NACK of it, as the papers' ns-3 code bases do
	// (NACKGenerationInterval, 4 us; 0 here means that default), so a
	// retransmission lost again costs an interval, not the sender's RTO.
	// Negative: one NACK per expected PSN, the RTO recovers the rest.
	// (A twin knob: an RNIC exposes no such setting.)
	NackIntervalNs int64
	// CNPOnNack makes a go-back-N receiver's NACK come with a CNP (under
	// the notification point's rules, as for a marked packet), as the ns-3
	// code bases' NACK carries the CNP flag: the sender slows down on loss.
	// Without it, NACKs re-sent every NackInterval during heavy loss make
	// senders go back again and again at full rate (docs/fabric-twin.md).
	CNPOnNack bool
	// MaxSimNs stops a run whose flows cannot finish.
	MaxSimNs int64
	DCQCN    DCQCN
}

// SwitchConfig is what a switch's own QoS provisioning sets: PFC, buffer
// management, ECN marking and scheduling.
type SwitchConfig struct {
	// PFC makes the lossless priorities lossless: LosslessPrios is a bit
	// mask of them (0 means priority 3 alone, the RoCE default; the engine
	// stores the mask it means).
	PFC           bool
	LosslessPrios uint8
	// Scheduler among a port's data priorities: "strict" (default, highest
	// first) or "dwrr" (deficit round robin with DWRRWeights, one packet of
	// quantum per unit of weight; a zero weight counts as 1). Control
	// packets (ACK, NACK, CNP) always go first.
	Scheduler   string
	DWRRWeights [8]int
	// XoffBytes is where the switch pauses the ingress ports feeding a
	// queue, XonBytes where it resumes them: the flow engine applies them to
	// the egress queue's depth, the packet engine to each ingress port's
	// buffered bytes (with a dynamic XOFF, below).
	XoffBytes, XonBytes int64
	// BufferBytes is a switch's shared buffer.
	BufferBytes int64
	// Packet engine: PFC XOFF is dynamic, as on shared-buffer switches:
	// min(XoffBytes, PFCAlpha x free shared buffer), where the shared buffer
	// is BufferBytes less HeadroomBytes reserved per ingress port for what
	// is in flight when a PAUSE is sent.
	HeadroomBytes int64
	PFCAlpha      float64
	// ECN marking (RED on the instantaneous depth): probability 0 below
	// Kmin, rising linearly to Pmax at Kmax, 1 above.
	ECNKminBytes, ECNKmaxBytes int64
	ECNPmax                    float64
	// ECNPrios is a bit mask of the queues that mark (0: every queue; the
	// engine stores the mask it means).
	ECNPrios uint8
	// DSCPMap makes the switch classify arriving data packets by DSCP: a
	// flow's packets go to traffic class (= priority, queue)
	// DSCPToTC[DSCP], class 0 for a code point without an entry. Without
	// it, or for a flow whose ToS is unknown, a packet keeps the priority
	// it arrived with (as its 802.1p priority would carry it). Class 7 is
	// the engine's control queue (ACK, NACK, CNP): data mapped there goes
	// to 6.
	DSCPMap  bool
	DSCPToTC [64]uint8
	// ECNAtEnqueue marks when a packet joins the egress queue; the default
	// marks at dequeue on the depth then, which signals congestion a whole
	// queueing delay sooner (what the papers' ns-3 switches do).
	ECNAtEnqueue bool
	// DTAlpha is the dynamic-threshold alpha of lossy queues: a queue may
	// hold at most alpha x (free buffer).
	DTAlpha float64
	// PauseQuanta is the pause time a PAUSE frame carries, in quanta of
	// 512 bit times at the link's rate (0: 0xFFFF, the maximum, what
	// switches send: 335.5 us at 100 Gb/s). The switch sends PAUSE again
	// every PauseRefreshNs while it stays in XOFF (0: half the pause time,
	// as switches refresh well before expiry); a port whose pause runs out
	// unrefreshed sends again (pfc.go).
	PauseQuanta    uint16
	PauseRefreshNs int64
}

// quanta is the pause time of c's PAUSE frames, in quanta.
func (c *SwitchConfig) quanta() uint16 {
	if c.PauseQuanta == 0 {
		return 0xFFFF
	}
	return c.PauseQuanta
}

// pauseNs is how long quanta pause a link of gbps (bits per ns).
func pauseNs(quanta uint16, gbps float64) float64 { return float64(quanta) * 512 / gbps }

// refreshNs is how often c refreshes a PAUSE on a link of gbps.
func (c *SwitchConfig) refreshNs(gbps float64) float64 {
	if c.PauseRefreshNs > 0 {
		return float64(c.PauseRefreshNs)
	}
	return pauseNs(c.quanta(), gbps) / 2
}

// DCQCN are the congestion-control parameters of an RNIC, named after the
// ConnectX firmware keys (mlxconfig, sysfs roce_rp/roce_np). The algorithm
// is the ConnectX variant as the papers' ns-3 code base models it (see
// prnic.go); g = 1 - DCE_TCP_G/1024.
type DCQCN struct {
	// Enabled turns DCQCN on. With it, a NIC cuts its rate on CNPs
	// (reaction point) for the priorities RPOff leaves on, and sends CNPs
	// for CE-marked data it receives (notification point) on the
	// priorities NPOff leaves on: bit masks of the priorities whose
	// ConnectX roce_rp / roce_np enable is 0, set per host
	// (PacketEngine.ConfigureHost).
	Enabled      bool
	RPOff, NPOff uint8
	// MinTimeBetweenCNPsNs is the notification point's CNP generation
	// (MIN_TIME_BETWEEN_CNPS): at most one CNP per QP per this interval, as
	// ConnectX does (firmware default 4 us); 0 sends one for every
	// ECN-marked packet, as the papers' ns-3 code bases do (their receiver
	// sets the CNP flag on the ACK of each marked packet, with no interval)
	// and the twin's default. An RNIC profile's cnp_generation sets it.
	MinTimeBetweenCNPsNs int64
	RateReduceMonitorNs  int64   // RATE_REDUCE_MONITOR_PERIOD
	DCETCPG              int     // DCE_TCP_G (/1024)
	DCETCPRTTNs          int64   // DCE_TCP_RTT: alpha update period
	InitialAlpha         float64 // INITIAL_ALPHA_VALUE / 1024
	RPGTimeResetNs       int64   // RPG_TIME_RESET
	RPGByteReset         int64   // RPG_BYTE_RESET (bytes)
	RPGThreshold         int     // RPG_THRESHOLD (fast recovery stages)
	RPGAIRateGbps        float64 // RPG_AI_RATE
	RPGHAIRateGbps       float64 // RPG_HAI_RATE
	RPGMinDecFac         float64 // RPG_MIN_DEC_FAC (percent)
	RPGMinRateGbps       float64 // RPG_MIN_RATE
	ClampTargetRate      bool    // CLAMP_TGT_RATE
}

// reacts is whether the reaction point cuts the rate of priority prio on
// CNPs.
func (d *DCQCN) reacts(prio uint8) bool { return d.Enabled && d.RPOff&(1<<prio) == 0 }

// notifies is whether the notification point sends CNPs for data that
// arrives on priority prio.
func (d *DCQCN) notifies(prio uint8) bool { return d.Enabled && d.NPOff&(1<<prio) == 0 }

// DefaultConfig is the twin's default fabric.
func DefaultConfig() Config {
	return Config{
		MTU: inventory.DefaultMTU, HeaderBytes: inventory.DefaultHeaderBytes,
		SwitchConfig: SwitchConfig{PFC: true, LosslessPrios: 1 << roceQueue, XoffBytes: 512 << 10, XonBytes: 384 << 10,
			BufferBytes: 12 << 20, HeadroomBytes: 64 << 10, PFCAlpha: 0.125, DTAlpha: 1,
			ECNKminBytes: 100_000, ECNKmaxBytes: 400_000, ECNPmax: 0.2, ECNPrios: 1 << 3},
		DropBytes: 6 << 20,
		AckEvery:  1, RTONs: 1_000_000, NackIntervalNs: 4_000, CNPOnNack: true, MaxSimNs: 10_000_000_000,
		ReorderQueues: 8, ReorderTimeoutNs: 100_000,
		// ConnectX-5 firmware defaults (hardware-surfaces reference), but
		// no byte counter (RPG_BYTE_RESET 0) and a CNP for every marked
		// packet (MIN_TIME_BETWEEN_CNPS 0), as in the papers' ns-3 code.
		DCQCN: DCQCN{Enabled: true, MinTimeBetweenCNPsNs: 0, RateReduceMonitorNs: 4_000, DCETCPG: 1019,
			DCETCPRTTNs: 1_000, InitialAlpha: 1023.0 / 1024, RPGTimeResetNs: 300_000, RPGByteReset: 0,
			RPGThreshold: 1, RPGAIRateGbps: 0.005, RPGHAIRateGbps: 0.05, RPGMinDecFac: 50, RPGMinRateGbps: 0.001},
	}
}
