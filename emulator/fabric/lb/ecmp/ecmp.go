package ecmp

import "github.com/labctl/labctl/emulator/fabric/lb"

// Module hashes per switch.
type Module struct{}

// Select implements lb.Module.
func (Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	return lb.ECMP(p.Hash, sw.Salt(), len(c))
}

// Register adds ECMP to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "ecmp", Help: "per-flow hashing of the 5-tuple with a per-switch seed (no parameters)",
		New: func(lb.Params) (lb.Module, error) { return Module{}, nil }})
}
