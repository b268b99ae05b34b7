package fabric

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"reflect"
	"sort"
	"testing"
	"time"
)

// fingerprint digests a run's results and counters, so that two runs (or
// two versions of the engine) can be compared at a glance.
func fingerprint(res []Result, c *Counters) string {
	h := sha256.New()
	fmt.Fprint(h, res)
	keys := make([]PortKey, 0, len(c.Ports))
	for k := range c.Ports {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Device < keys[j].Device || keys[i].Device == keys[j].Device && keys[i].Port < keys[j].Port
	})
	for _, k := range keys {
		fmt.Fprint(h, k, *c.Ports[k])
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// engineCase is a packet engine configuration the determinism tests run:
// lossless with PFC, ECN and DCQCN and ECMP; and lossy with a small buffer
// and per-packet spraying (drops, go-back-N, reordering).
type engineCase struct {
	name string
	mod  func(*Config)
	lb   string
}

func engineCases() []engineCase {
	return []engineCase{
		{"lossless", func(*Config) {}, "ecmp"},
		{"lossy-drill", func(c *Config) { c.PFC = false; c.BufferBytes = 1 << 20 }, "drill"},
	}
}

// engine makes a fresh packet engine of the case on topo.
func (tc engineCase) engine(t *testing.T, topo *Topology) *PacketEngine {
	t.Helper()
	cfg := DefaultConfig()
	tc.mod(&cfg)
	cfg.LB, cfg.Modules = tc.lb, schemes.MustRegistry()
	e, err := NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPacketEngineDeterministic runs the papers' 128-host setting twice per
// configuration on fresh engines and requires identical flow results and
// counters: lossless with PFC, ECN and DCQCN; and lossy with a small buffer
// and per-packet spraying (drops, go-back-N, reordering).
func TestPacketEngineDeterministic(t *testing.T) {
	topo, eps := papersSetting(t)
	flows := workload(t, eps, "websearch", 0.8, 300*time.Microsecond)
	for _, tc := range engineCases() {
		t.Run(tc.name, func(t *testing.T) {
			var prints [2]string
			var results [2][]Result
			var counters [2]*Counters
			for i := range prints {
				e := tc.engine(t, topo)
				res, err := e.Run(context.Background(), flows, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				results[i], counters[i] = res, e.Counters()
				prints[i] = fingerprint(res, counters[i])
			}
			if !reflect.DeepEqual(results[0], results[1]) {
				t.Error("same seed, different flow results")
			}
			if !reflect.DeepEqual(counters[0], counters[1]) {
				t.Error("same seed, different counters")
			}
			var tot PortCounters
			for _, p := range counters[0].Ports {
				tot.Drops += p.Drops
				tot.ECNMarked += p.ECNMarked
				tot.PFCTx[3] += p.PFCTx[3]
				tot.OutOfSequence += p.OutOfSequence
				tot.Retransmits += p.Retransmits
			}
			t.Logf("%d flows, fingerprint %s; drops %d, ECN %d, PAUSE %d, out of sequence %d, retransmits %d",
				len(flows), prints[0], tot.Drops, tot.ECNMarked, tot.PFCTx[3], tot.OutOfSequence, tot.Retransmits)
		})
	}
}
