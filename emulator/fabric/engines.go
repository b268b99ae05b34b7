package fabric

import "github.com/labctl/labctl/internal/registry"

// The engines' names, as a scenario's emulation.engine and --engine say them.
const (
	EnginePacket = "packet" // the default
	EngineFlow   = "flow"
)

// EngineKind is one registered engine: its name, a line of help, whether
// it simulates packets (and so runs load-balancing modules, transports
// and host modules) and its constructor.
type EngineKind struct {
	Name    string
	Help    string
	Packets bool
	New     func(t *Topology, cfg Config) (Engine, error)
}

// Engines is the registry of the twin's engines, built per call (no
// package state).
func Engines() *registry.Registry[EngineKind] {
	r := registry.New[EngineKind]("engine")
	for _, k := range []EngineKind{
		{Name: EnginePacket, Packets: true,
			Help: "every packet, PAUSE frame, ECN mark, CNP and retransmission simulated; switches run cfg.LB",
			New: func(t *Topology, cfg Config) (Engine, error) {
				e, err := NewPacketEngineLB(t, cfg, nil)
				if err != nil {
					return nil, err // not a nil *PacketEngine in an Engine
				}
				return e, nil
			}},
		{Name: EngineFlow,
			Help: "max-min sharing of bandwidth over ECMP paths: no packets or queueing delay; for labs too large for the packet engine",
			New:  func(t *Topology, cfg Config) (Engine, error) { return NewFlowEngine(t, cfg), nil }},
	} {
		if err := r.Register(k.Name, k); err != nil {
			panic(err) // a programming error in the list above; its test builds it
		}
	}
	return r
}
