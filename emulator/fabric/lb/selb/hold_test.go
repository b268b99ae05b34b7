package selb

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/conweave"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var hold = flag.Bool("hold", false, "run TestReorderHold (the sweep's fabric, -sweep.topo and -sweep.queues apply)")

// holdClock times, at destination ToRs, how long each reroute's early
// packets wait: from the first packet a flow's epoch puts in a reorder
// queue to the arrival of that epoch's tail (a queue released earlier by
// its deadline counts until the tail too).
type holdClock struct {
	start map[int32]int64 // by flow: the first held packet, ns
	waits []float64       // us
}

func (h *holdClock) see(sw lb.Switch, p *lb.Packet, q lb.Queue) lb.Queue {
	if p.Kind != lb.Data || p.Role != lb.DstToR {
		return q
	}
	if _, on := h.start[p.Flow]; !on && q != lb.Normal {
		h.start[p.Flow] = sw.Now()
	}
	if t0, on := h.start[p.Flow]; on && p.Hdr.Flags&lb.FlagTail != 0 {
		h.waits = append(h.waits, float64(sw.Now()-t0)/1000)
		delete(h.start, p.Flow)
	}
	return q
}

type holdSELB struct {
	*Module
	h *holdClock
}

func (w holdSELB) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	return w.h.see(sw, p, w.Module.Arrive(sw, p, out))
}

type holdConWeave struct {
	*conweave.Module
	h *holdClock
}

func (w holdConWeave) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	return w.h.see(sw, p, w.Module.Arrive(sw, p, out))
}

// TestReorderHold measures the paper's mechanism claim, that SELB's
// rerouted packets hold a reorder queue for less time than ConWeave's,
// on the sweep's workload (seeds 1-5, both schemes' defaults). Run with
// -hold.
func TestReorderHold(t *testing.T) {
	if !*hold {
		t.Skip("-hold not given")
	}
	cfg := fabric.DefaultConfig()
	cfg.ReorderQueues = *sweepQueues
	for _, scheme := range []string{"conweave", "selb"} {
		h := &holdClock{}
		for seed := int64(1); seed <= 5; seed++ {
			topo, fs := lbtest.Poisson(t, *sweepTopo, "alistorage2019", 0.6, time.Millisecond, seed)
			h.start = map[int32]int64{}
			var m lb.Module = holdSELB{newModule(t, nil), h}
			if scheme == "conweave" {
				m = holdConWeave{conweaveModule(t), h}
			}
			e, err := fabric.NewPacketEngineLB(topo, cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(context.Background(), fs, fabric.RunOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(h.waits)
		var sum float64
		for _, w := range h.waits {
			sum += w
		}
		n := len(h.waits)
		fmt.Printf("| %s | %d | %.2f | %.2f | %.2f |\n", scheme, n, sum/float64(n), h.waits[n/2], h.waits[n*99/100])
	}
}
