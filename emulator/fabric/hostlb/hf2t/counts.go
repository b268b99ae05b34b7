package hf2t

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting (the host module's side): gaps held up to
// the flowlet timeout, each a flowlet boundary the host made, and those
// that were long enough already.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	return append(dst,
		lb.Count{Name: lb.CountGapsStretched, Value: m.stats.Stretched},
		lb.Count{Name: lb.CountGapsNatural, Value: m.stats.Natural})
}
