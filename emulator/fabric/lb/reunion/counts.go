package reunion

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting: flows marked elephant, every move of a
// flow (by a notification, Algorithm 2, or at a gap longer than the FTV)
// and of them the flowlet fallback's, and notifications sent.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	s := &m.stats
	return append(dst,
		lb.Count{Name: lb.CountElephants, Value: uint64(s.Elephants)},
		lb.Count{Name: lb.CountReroutes, Value: uint64(s.Reroutes + s.Flowlets)},
		lb.Count{Name: lb.CountFlowletMoves, Value: uint64(s.Flowlets)},
		lb.Count{Name: lb.CountNotifications, Value: uint64(s.Notifies)})
}
