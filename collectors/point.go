package collectors

import "time"

// Point is one telemetry sample in the schema of the architecture document:
// measurement "port", "queue", "rnic" or "flow"; bounded tags only.
type Point struct {
	Measurement string
	Tags        map[string]string // lab, run, device, port, queue, host, idle ...
	Fields      map[string]any    // uint64, int64, float64, string, bool
	Time        time.Time
}

// Idle samples: an emulated lab's twin samples its switches on the
// simulated timeline while it simulates a point's traffic, and otherwise
// only now and then on wall time, with nothing moving. Those samples
// carry tag TagIdle = IdleValue (traffic samples carry no such tag), so
// reports and dashboards can leave them out of traffic figures, e.g.
// InfluxQL `WHERE "idle" != 'true'`, Flux `filter(fn: (r) => not exists r.idle)`.
const (
	TagIdle   = "idle"
	IdleValue = "true"
	// IdleLeaf is how a gNMI target marks an idle notification: one more
	// update of this name with value true (the emulated targets send it;
	// no real device does).
	IdleLeaf = "labctl-idle"
)

// Idle says whether p was sampled while no traffic ran.
func (p Point) Idle() bool { return p.Tags[TagIdle] == IdleValue }
