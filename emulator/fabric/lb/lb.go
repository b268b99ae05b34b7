package lb

// Module is a switch load-balancing program. One instance runs on each
// switch (or one for all: it then keys its tables by Switch.ID).
type Module interface {
	// Select returns the index in cands of the link to send p on. The
	// engine calls it only where a packet has more than one candidate
	// and no pinned path; ECMP-like modules need nothing else.
	Select(sw Switch, p *Packet, cands []Egress) int
}

// Arriver sees every packet (data, ACK, NACK, CNP) at every switch hop,
// once its egress is known and before it joins the egress queue. It may
// read and write p.Hdr and its own tables; it returns the reorder queue
// (Switch.AllocQueue) the packet waits in, or Normal for the egress
// port's own queue.
type Arriver interface {
	Arrive(sw Switch, p *Packet, out Egress) Queue
}

// Dequeuer sees every packet leaving a port of its switch, when its
// serialisation starts (link meters, departure timestamps).
type Dequeuer interface {
	Dequeue(sw Switch, p *Packet, out Egress)
}

// Receiver takes the control packets other switches' modules send to its
// switch (Switch.Send). The packet is freed when Receive returns.
type Receiver interface {
	Receive(sw Switch, p *Packet)
}

// Ticker takes the timers set with Switch.Schedule.
type Ticker interface {
	Tick(sw Switch, arg int64)
}

// Installer is told once which switch it is set on, when the engine
// has it (built, or set later): before any run, so a module can size
// its tables or report what it will count (lb.LinkCounting's links).
type Installer interface {
	Install(sw Switch)
}

// Resetter is told when a run starts: simulated time starts again at 0,
// and flow indexes (Packet.Flow) are the new run's.
type Resetter interface {
	Reset(sw Switch)
}

// Egress is one candidate link out of a switch.
type Egress struct {
	Link       int32  // the engine's directed link index (dense, < Switch.NumLinks)
	Port, Next string // egress port name, next device
}

// Queue names a reorder queue of a switch; Normal is an egress port's own
// queue.
type Queue int32

// Normal is the egress port's own queue.
const Normal Queue = 0

// Tier is a switch's place in the fabric, by its distance from the hosts.
type Tier uint8

const (
	TierToR  Tier = iota // hosts attach to it
	TierAgg              // between the ToRs and the top tier (fat-trees)
	TierCore             // the top tier (a leaf-spine's spines)
)

// Role is what a switch is for one packet, in the packet's own direction
// (for an ACK the source ToR is the data receiver's).
type Role uint8

const (
	Transit Role = iota // a ToR neither end attaches to (unusual topologies)
	SrcToR              // the ToR of the packet's sender
	DstToR              // the ToR of the packet's receiver
	SameToR             // both ends attach to this ToR
	Agg                 // an aggregation switch (fat-tree), either way
	Core                // a spine or core switch
)

func (r Role) String() string {
	switch r {
	case SrcToR:
		return "src-tor"
	case DstToR:
		return "dst-tor"
	case SameToR:
		return "same-tor"
	case Agg:
		return "agg"
	case Core:
		return "core"
	}
	return "transit"
}

// Kind is a packet's kind.
type Kind uint8

const (
	Data    Kind = iota
	Ack          // go-back-N ACK or IRN ACK/SACK
	Nack         // sequence-error NAK
	CNP          // congestion notification
	Control      // a switch-to-switch control packet (Switch.Send)
)

// Packet is a module's view of one packet at one hop. The engine fills
// it (no allocation); only Hdr's target may be written.
type Packet struct {
	Kind     Kind
	Role     Role
	Priority uint8 // traffic class at this hop (7: control)
	ECN      bool  // CE-marked
	Last     bool  // the flow's last data packet
	Flow     int32 // the flow's index in the run, same in both directions; -1 for Control
	Bytes    int32 // on the wire
	PSN      int64
	Hash     uint64 // this direction's 5-tuple hash (Control: of the two switches)
	// Src and Dst are the packet's end hosts; for Control the sending and
	// the destination switch.
	Src, Dst string
	// SrcToR and DstToR are the switch IDs of the ToRs of Src and Dst (for
	// Control, of the two switches).
	SrcToR, DstToR int
	InLink         int32 // link it arrived on; -1 if it starts here
	Hdr            *Header
}

// Header is per-packet state a module carries from switch to switch: it
// travels inside the packet (ACKs and control packets have their own) and
// starts zero. Field names suggest uses; the engine reads only FlagPinned.
type Header struct {
	Path     int32 // path ID between two ToRs (Switch.Paths); pinned with FlagPinned
	Flags    Flags
	TS       int64 // ns: a timestamp (e.g. departure from the source ToR)
	TS2      int64 // ns: a second one (e.g. ConWeave's tail time)
	FBPath   int32 // feedback: the path a metric is about
	FBMetric int32 // feedback: the metric (e.g. CONGA's quantised DRE)
	Words    [4]int64
}

// Flags are header bits. The engine sets FlagPinned (Switch.Pin); the
// others are for modules, and bits from FlagUser up are free.
type Flags uint32

const (
	FlagPinned Flags = 1 << iota
	FlagInit
	FlagTail
	FlagRerouted
	FlagRequest
	FlagReply
	FlagNotify
	FlagFeedback
	FlagUser Flags = 1 << 16
)

// Switch is a module's view of the switch it runs on, and its means to act.
// Times are ns of simulated time.
type Switch interface {
	Name() string
	ID() int // dense, < NumSwitches
	Tier() Tier
	Salt() uint64 // the switch's hash seed (per run seed)
	Now() int64
	NumSwitches() int
	NumLinks() int
	SwitchName(id int) string
	SwitchTier(id int) Tier
	// SwitchID is the ID of a switch by name.
	SwitchID(name string) (int, bool)

	// Queues and links. QueueBytes is the depth of an egress link's
	// priority queue (reorder queues excluded); QueueTotals the bytes it
	// has ever taken in and sent, for rates of growth.
	QueueBytes(link int32, prio int) int64
	QueueTotals(link int32, prio int) (in, out int64)
	LinkGbps(link int32) float64
	LinkDelayNs(link int32) int64
	// LinkEnds are the switch IDs at a link's two ends (-1: a host).
	LinkEnds(link int32) (from, to int)
	// Ports are the switch's egress links (shared: do not modify).
	Ports() []Egress

	// Paths counts the shortest paths between two switches; Path lists
	// the links of one (shared: do not modify), in a fixed order that
	// makes a path ID mean the same at every switch.
	Paths(from, to int) int
	Path(from, to, id int) []Egress
	// Pin makes p follow path id from this switch, which must be the
	// packet's source ToR (data, ACK, NACK, CNP): later switches honour
	// it without asking their module. It sets p.Hdr.Path and FlagPinned;
	// false if the path does not exist.
	Pin(p *Packet, id int) bool

	// Send sends a control packet of bytes on the wire to switch to, on
	// the control priority: it is queued and serialised like any packet,
	// over the path h.Path when h has FlagPinned (a path of Paths(ID(), to)),
	// else per hop by hash. The module of switch to receives a copy of h
	// (Receiver). False if to is unknown or unreachable. Pass a Header the
	// module keeps (a field): the address of a local escapes through this
	// interface and costs an allocation per call.
	Send(to int, bytes int, h *Header) bool
	// Notify sends a notification of bytes on the wire about p's flow to
	// the flow's sending host, whose host module takes a copy of h
	// (hostlb.Notified): it travels the flow's reverse direction on the
	// control priority, as a CNP does, unseen by the switches' modules.
	// False if p is not a flow's packet or the flow is done. As with
	// Send, pass a Header the module keeps.
	Notify(p *Packet, bytes int, h *Header) bool
	// Schedule calls the module's Tick(sw, arg) after d ns (no allocation).
	Schedule(d int64, arg int64)
	// After runs fn after d ns (a closure: allocates; for rare timers).
	After(d int64, fn func())

	// Reorder queues: extra queues of an egress port that hold packets
	// (Arriver returns one) while paused. AllocQueue gives a paused queue
	// of link (an egress of this switch) and priority prio, with the
	// configured timeout running; it fails (false) when the port has none
	// left (the engine's Config.ReorderQueues), and the module then falls
	// back and calls Fallback to count it. Pause (re)starts a queue's
	// pause for timeout ns (<= 0: the configured default), after which it
	// resumes anyway (counted). A resumed queue is served at its priority
	// after the packets the port's own queue held when it resumed (during
	// Arrive: including the packet in hand) and before newer ones; a
	// packet put in a resumed queue that has drained goes to the port's
	// own queue. FreeQueue gives a queue back; packets still in it are
	// sent first. QueueHeld is what a queue holds.
	AllocQueue(link int32, prio int) (Queue, bool)
	Pause(q Queue, timeout int64)
	Resume(q Queue)
	FreeQueue(q Queue)
	QueueHeld(q Queue) (pkts int, bytes int64)
	Fallback()
}
