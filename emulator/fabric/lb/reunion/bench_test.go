package reunion

import (
	"flag"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var benchParams = flag.String("reunion", "", "Reunion parameters of BenchmarkReunionWebSearch08, name=value,... (e.g. -reunion interval_us=250)")

// BenchmarkReunionWebSearch08 is lbtest.BenchWebSearch08 with Reunion on
// every switch: the 128-host papers' setting at 0.8 load. Run with
// -benchtime 1x -cpu 1.
func BenchmarkReunionWebSearch08(b *testing.B) {
	params := lbtest.ParseParams(*benchParams)
	var m *Module
	lbtest.BenchWebSearch08(b, func() lb.Module { m = newModule(b, params); return m })
	b.Logf("%+v", m.Stats())
}
