package fabric

import (
	"context"
	"math"
	"testing"
)

// TestDWRRSharesByWeight: two long flows on lossless priorities 1 and 2,
// weights 1 and 3, into one port: DWRR splits it 1:3; strict priority
// gives priority 2 everything while both are active.
func TestDWRRSharesByWeight(t *testing.T) {
	share := func(sched string) float64 {
		e := pengine(t, 3, func(c *Config) {
			c.DCQCN.Enabled, c.LosslessPrios, c.Scheduler = false, 1<<1|1<<2, sched
			c.DWRRWeights[1], c.DWRRWeights[2] = 1, 3
		})
		var a0, b0, a1, b1 uint64
		flows := []Flow{{ID: 1, Src: "h2", Dst: "h1", Bytes: 64 * mib, Priority: 1}, {ID: 2, Src: "h3", Dst: "h1", Bytes: 64 * mib, Priority: 2}}
		_, err := e.Run(context.Background(), flows, RunOptions{SampleEvery: 1_000_000, OnSample: func(now int64, c *Counters) {
			a, b := c.Ports[PortKey{"h2", "mlx5_0"}].TxBytes, c.Ports[PortKey{"h3", "mlx5_0"}].TxBytes
			switch now {
			case 1_000_000:
				a0, b0 = a, b
			case 3_000_000:
				a1, b1 = a, b
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if c := e.Counters(); c.Ports[PortKey{"sw", "1/0"}].Drops != 0 {
			t.Fatal("lossless priorities dropped")
		}
		return float64(b1-b0) / float64(a1-a0+b1-b0)
	}
	if s := share("dwrr"); math.Abs(s-0.75) > 0.05 {
		t.Errorf("DWRR: priority 2 (weight 3) got %.2f of the port, want 0.75", s)
	}
	if s := share("strict"); s < 0.98 {
		t.Errorf("strict priority: priority 2 got %.2f of the port, want all of it", s)
	}
}
