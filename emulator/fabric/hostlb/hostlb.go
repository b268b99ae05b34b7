package hostlb

import "github.com/labctl/labctl/emulator/fabric/lb"

// Module is a host load-balancing program: one instance runs on each host
// RNIC that the profile gives it to.
type Module interface {
	// Send sees a data packet of one of the host's QPs when it is about to
	// leave: its pacing time has come and the NIC port can take it. It
	// returns how long to hold it, in ns: 0 sends it now; d > 0 keeps the
	// QP from sending for d ns, after which the packet leaves without Send
	// being asked again. Send may write p.SrcPort: the packet and the QP's
	// later ones leave with that UDP source port (the switches hash it).
	Send(h Host, p *Packet) (holdNs int64)
}

// Notified takes the notifications switch modules send to the host about
// one of its flows (lb.Switch.Notify); p.Hdr is the switch's header.
type Notified interface {
	Notify(h Host, p *Packet)
}

// Ticker takes the timers set with Host.Schedule.
type Ticker interface {
	Tick(h Host, arg int64)
}

// Resetter is told when a run starts: simulated time starts again at 0,
// and flow indexes (Packet.Flow) are the new run's.
type Resetter interface {
	Reset(h Host)
}

// Packet is a module's view of one data packet of its host, or of a
// notification; the engine fills it (no allocation).
type Packet struct {
	Flow  int32 // the flow's (QP's) index in the run: dense from 0
	PSN   int64
	Bytes int32 // on the wire
	Last  bool  // the flow's last packet
	Retx  bool  // sent before (a retransmission)
	// SrcPort is the UDP source port the packet leaves with; Send may
	// change it. Notifications carry the flow's current one.
	SrcPort uint16
	Dst     string     // the flow's receiver
	Switch  int        // notifications: the sending switch's ID; -1 for data
	Hdr     *lb.Header // notifications: the switch's header; nil for data
}

// Host is a module's view of the RNIC it runs on, and its means to act on
// the host's QPs. Times are ns of simulated time; rates Gb/s.
type Host interface {
	Name() string
	ID() int // dense, < the number of hosts
	Now() int64
	// LineGbps is the QP's line rate (its NIC port's), Rate its current
	// sending rate (DCQCN's, or what SetRate set).
	LineGbps(flow int32) float64
	Rate(flow int32) float64
	// SetRate sets the QP's sending rate (clamped to (0, line]) as a rate
	// limiter would; DCQCN, where it runs, moves on from there.
	SetRate(flow int32, gbps float64)
	// Pause stops the QP from sending until Resume; a paused QP keeps its
	// timers (an RTO still fires, and sends nothing).
	Pause(flow int32)
	Resume(flow int32)
	Paused(flow int32) bool
	// Schedule calls the module's Tick(h, arg) after d ns (no allocation).
	Schedule(d int64, arg int64)
}
