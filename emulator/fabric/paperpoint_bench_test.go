package fabric

import (
	"testing"
	"time"
)

// BenchmarkPaperPointAliStorage is the simulation alone of the SELB and
// ConWeave evaluations' setting as bench/e2e.sh runs it end to end
// (leafspine:8x8:16@100, AliStorage at 0.5 load for 10 ms, ECMP, seed 1):
// the figure its end-to-end target is twice of. Run with -benchtime 1x
// -cpu 1.
func BenchmarkPaperPointAliStorage(b *testing.B) {
	topo, eps := generatedHosts(b, "leafspine:8x8:16@100")
	flows := workload(b, eps, "alistorage2019", 0.5, 10*time.Millisecond)
	b.Logf("%d hosts, %d flows", len(eps), len(flows))
	benchPackets(b, topo, DefaultConfig(), flows)
}
