package fabric

import "fmt"

// LB is a switch load-balancing module of the packet engine: at every
// switch hop it picks the egress link for a packet among the equal-cost
// next hops toward the packet's destination. Modules for LetFlow, CONGA,
// DRILL, ConWeave and the seeds' schemes implement it; a switch image's
// manifest names the module. One LB instance serves every switch of a
// run unless PacketEngine.SetSwitchLB gives a switch its own.
type LB interface {
	// Select returns the index in cands of the link to send p on.
	Select(sw Switch, p *PacketInfo, cands []Egress) int
}

// LBFactory makes a module for an engine; params come from the image
// manifest or the config.
type LBFactory func(params map[string]string) (LB, error)

// PacketInfo is what a module may read of a packet.
type PacketInfo struct {
	QP       int    // the flow's QP (stable per flow)
	Src, Dst string // end hosts of this packet's direction
	Hash     uint64 // hash of this direction's RoCEv2 5-tuple
	PSN      int64
	Data     bool // false: ACK, NACK or CNP
	Bytes    int  // on the wire
	Priority int
	// Meta is per-packet state a module may carry from switch to switch
	// (a path ID, a timestamp, a flowlet tag ...).
	Meta *[4]int64
}

// Egress is one candidate link.
type Egress struct {
	Link       int32
	Port, Next string // egress port name, next device
}

// Switch is a module's view of the switch deciding, and its means to act.
type Switch interface {
	Name() string
	Salt() uint64 // the switch's hash seed
	Now() int64   // ns
	// QueueBytes is the current depth of an egress link's priority queue.
	QueueBytes(link int32, prio int) int64
	// After runs fn at this switch after d ns of simulated time.
	After(d int64, fn func())
	// Send delivers msg to the same module at switch to, after the
	// propagation delay of the shortest path (control messages take no
	// bandwidth in this engine).
	Send(to string, msg any)
}

// Receiver is implemented by modules that exchange control messages.
type Receiver interface {
	Receive(sw Switch, from string, msg any)
}

// ecmp hashes the 5-tuple per switch with the run's seed.
type ecmp struct{}

func (ecmp) Select(sw Switch, p *PacketInfo, cands []Egress) int {
	return ecmpPick(p.Hash, sw.Salt(), len(cands))
}

// lbModules is the registry of load-balancing modules by name.
func lbModules() map[string]LBFactory {
	return map[string]LBFactory{
		"ecmp":    func(map[string]string) (LB, error) { return ecmp{}, nil },
		"letflow": newLetFlow,
		"drill":   newDRILL,
	}
}

// NewLB makes a registered module.
func NewLB(name string, params map[string]string) (LB, error) {
	if name == "" {
		name = "ecmp"
	}
	f, ok := lbModules()[name]
	if !ok {
		return nil, fmt.Errorf("fabric: unknown load-balancing module %q", name)
	}
	return f(params)
}
