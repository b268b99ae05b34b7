package emulator

import (
	"context"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// BenchmarkLabStart: an emulated fat-tree comes up (every switch's and
// host's endpoints, the switches' boot files and bf_switchd) and closes.
//
//	go test -run XXX -bench LabStart -benchtime 3x ./emulator/
func BenchmarkLabStart(b *testing.B) {
	for _, spec := range []string{"fattree:8", "fattree:16"} {
		b.Run(spec, func(b *testing.B) {
			for range b.N {
				src, err := inventory.Generate(spec)
				if err != nil {
					b.Fatal(err)
				}
				l, err := Start(context.Background(), src, Options{Dir: b.TempDir(), Engine: "packet"})
				if err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}
