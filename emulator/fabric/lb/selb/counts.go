package selb

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting: flows moved off a congested path, and
// the destination ToRs' reordering.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	r := m.dest.Stats()
	return append(dst,
		lb.Count{Name: lb.CountReroutes, Value: uint64(m.stats.Reroutes)},
		lb.Count{Name: lb.CountReordered, Value: uint64(r.Held)},
		lb.Count{Name: lb.CountReorderFails, Value: uint64(r.Fallbacks)})
}
