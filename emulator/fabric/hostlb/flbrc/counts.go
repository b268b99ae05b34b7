package flbrc

import "github.com/labctl/labctl/emulator/fabric/lb"

// Counts implements lb.Counting (the host module's side): CNMs taken, QPs
// paused and resumed.
func (m *Module) Counts(dst []lb.Count) []lb.Count {
	return append(dst,
		lb.Count{Name: lb.CountCNMReceived, Value: m.stats.Congestion + m.stats.Release},
		lb.Count{Name: lb.CountPauses, Value: m.stats.Pauses},
		lb.Count{Name: lb.CountResumes, Value: m.stats.Resumes})
}
