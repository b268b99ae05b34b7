package fabric

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
)

// TestWarmChangesNothing runs the same flows with and without warm's
// prefetches (which the engine turns on only on large fabrics) and
// requires identical results and counters: lossless ECMP, lossy
// per-packet spraying with drops, retransmissions and reordering, and every
// registered scheme (pinned paths, reorder queues, notifications), so that
// every kind of event and packet is read ahead.
func TestWarmChangesNothing(t *testing.T) {
	t.Parallel()
	topo, eps := generatedHosts(t, "fattree:4")
	flows := workload(t, eps, "alistorage2019", 0.5, 200*time.Microsecond)
	cases := engineCases()
	for _, name := range schemes.MustRegistry().Names() {
		cases = append(cases, engineCase{"lossless-" + name, func(*Config) {}, name})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res [2][]Result
			var ctr [2]*Counters
			for i, on := range []bool{false, true} {
				e := tc.engine(t, topo)
				e.warmOn = on
				var err error
				if res[i], err = e.Run(context.Background(), flows, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				ctr[i] = e.Counters()
			}
			if !reflect.DeepEqual(res[0], res[1]) {
				t.Error("prefetching changed the flows' results")
			}
			if !reflect.DeepEqual(ctr[0], ctr[1]) {
				t.Error("prefetching changed the counters")
			}
		})
	}
}
