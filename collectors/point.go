package collectors

import "time"

// Point is one telemetry sample in the schema of the architecture document:
// measurement "port", "queue", "rnic" or "flow"; bounded tags only.
type Point struct {
	Measurement string
	Tags        map[string]string // lab, run, device, port, queue, host ...
	Fields      map[string]any    // uint64, int64, float64, string, bool
	Time        time.Time
}
