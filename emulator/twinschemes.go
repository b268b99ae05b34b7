package emulator

import (
	"time"

	"github.com/labctl/labctl/emulator/fabric"
)

// schemePublisher is a switch's telemetry endpoint that also serves the
// twin's scheme counters (a gnmitarget.Target: under its own path, which
// no real switch has).
type schemePublisher interface {
	PublishSchemes(ts time.Time, sc fabric.SchemeCounts, idle bool)
}

// publishSchemes hands switch name's scheme counters of snapshot s to its
// endpoint p, after p has the snapshot's ports: same timestamp, same idle
// mark. A switch whose module counts nothing gets nothing.
func publishSchemes(p publisher, s snapshot, name string) {
	sc, ok := s.schemes[name]
	if !ok {
		return
	}
	if sp, ok := p.(schemePublisher); ok {
		sp.PublishSchemes(s.ts, sc, s.idle)
	}
}
