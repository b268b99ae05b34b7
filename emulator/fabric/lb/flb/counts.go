package flb

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting: packets moved to a faster path, CNMs
// made and relayed, flows isolated, and CNMs forwarded to hosts.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	s := &m.stats
	return append(dst,
		lb.Count{Name: lb.CountReroutes, Value: uint64(s.Reroutes)},
		lb.Count{Name: lb.CountCNMSent, Value: uint64(s.CNMs)},
		lb.Count{Name: lb.CountCNMRelayed, Value: uint64(s.Relays)},
		lb.Count{Name: lb.CountIsolations, Value: uint64(s.Isolated)},
		lb.Count{Name: lb.CountNotifications, Value: uint64(s.HostNotices)})
}
