package collectors

import (
	"fmt"

	"github.com/labctl/labctl/internal/registry"
)

// The sinks' names.
const (
	SinkArchive = "archive" // line protocol files in the run's directory
	SinkInflux  = "influx"  // InfluxDB v2, spooled while it is down
)

// SinkOptions are what the sinks are built from; each takes its part.
type SinkOptions struct {
	Dir    string        // archive: the directory of the .lp files
	Influx *InfluxConfig // influx: the server, bucket, token and spool
}

// SinkKind is one registered sink: its name, a line of help and its
// constructor.
type SinkKind struct {
	Name string
	Help string
	New  func(SinkOptions) (Sink, error)
}

// Sinks is the registry of telemetry sinks, built per call (no package
// state).
func Sinks() *registry.Registry[SinkKind] {
	r := registry.New[SinkKind]("telemetry sink")
	for _, k := range []SinkKind{
		{Name: SinkArchive, Help: "one line-protocol file per measurement in the run's telemetry directory",
			New: func(o SinkOptions) (Sink, error) {
				if o.Dir == "" {
					return nil, fmt.Errorf("telemetry sink %s: no directory", SinkArchive)
				}
				return NewArchiveSink(o.Dir)
			}},
		{Name: SinkInflux, Help: "InfluxDB v2 write API; points it does not take wait in a spool and are replayed",
			New: func(o SinkOptions) (Sink, error) {
				if o.Influx == nil {
					return nil, fmt.Errorf("telemetry sink %s: no InfluxDB configured", SinkInflux)
				}
				return NewInfluxSink(*o.Influx)
			}},
	} {
		if err := r.Register(k.Name, k); err != nil {
			panic(err) // a programming error in the list above; its test builds it
		}
	}
	return r
}
