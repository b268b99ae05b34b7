package gnmitarget

import (
	"testing"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
)

// The notifications share their paths between samples (notify.go): each
// sample must still carry its own values, and an idle one the mark.
func TestNotificationsCarryEachSamplesValues(t *testing.T) {
	tgt, err := New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	sample := func(v uint64) *fabric.PortCounters {
		c := &fabric.PortCounters{TxBytes: v, RxBytes: v + 1, Drops: v + 2}
		c.PFCRx[5] = v + 3
		c.PauseRxNs[5] = (v + 4) * 1000
		c.Queues[3].DepthBytes = v + 5
		c.Queues[6].TxPkts, c.Queues[6].WatermarkBytes = v+6, v+7
		return c
	}
	tests := []struct {
		name string
		v    uint64
		idle bool
	}{{"first", 100, false}, {"second", 200, true}, {"third", 300, false}}
	for _, tc := range tests {
		ns := tgt.notifications(int64(tc.v), "1/0", sample(tc.v), tc.idle)
		if len(ns) != 6 { // counters, PFC, queues 3 and 6 twice each
			t.Fatalf("%s: %d notifications, want 6", tc.name, len(ns))
		}
		got := map[string]uint64{}
		for _, n := range ns {
			pts, bad := collectors.Decode(n, "leaf1", "lab", "run")
			if len(bad) > 0 {
				t.Errorf("%s: the collector cannot read %+v", tc.name, bad)
			}
			for _, p := range pts {
				if p.Idle() != tc.idle {
					t.Errorf("%s: %s idle %v, want %v", tc.name, p.Measurement, p.Idle(), tc.idle)
				}
				for f, x := range p.Fields {
					got[p.Measurement+p.Tags["queue"]+"."+f], _ = collectors.Uint(x)
				}
			}
		}
		v := tc.v
		want := map[string]uint64{"port.tx_bytes": v, "port.rx_bytes": v + 1, "port.drops": v + 2, "port.pfc5_rx": v + 3,
			"queue3.depth_bytes": v + 5, "queue6.tx_pkts": v + 6, "queue6.watermark": v + 7}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s = %d, want %d", tc.name, k, got[k], w)
			}
		}
	}
}

// While garbled (GarbleFor), every port's PFC key carries "N/A" for the
// priority-3 rx count and its other counters as ever: the collector finds
// exactly that one value unreadable, and nothing once the fault is over.
func TestGarbledPFCCounter(t *testing.T) {
	t.Parallel()
	tgt, err := New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &fabric.PortCounters{}
	c.PFCRx[3], c.PFCTx[3] = 7, 9
	for _, garbling := range []bool{true, false} {
		tgt.garbling = garbling
		var bad []collectors.Unreadable
		fields := map[string]any{}
		for _, n := range tgt.notifications(1, "1/0", c, false) {
			pts, b := collectors.Decode(n, "leaf1", "lab", "run")
			bad = append(bad, b...)
			for _, p := range pts {
				if p.Measurement == "port" && p.Tags["port"] == "1/0" {
					for k, v := range p.Fields {
						fields[k] = v
					}
				}
			}
		}
		switch {
		case garbling && (len(bad) != 1 || bad[0].Leaf != collectors.PrioName(collectors.SAIPFCRxPkts, 3) || bad[0].Value != "N/A" || bad[0].Count != 1):
			t.Errorf("garbled: unreadable %+v, want the priority-3 PFC rx count alone", bad)
		case !garbling && len(bad) > 0:
			t.Errorf("not garbled: unreadable %+v", bad)
		case fields["pfc3_tx"] != uint64(9) || hasField(fields, "pfc3_rx") == garbling:
			t.Errorf("garbled %v: fields %v", garbling, fields)
		}
	}
}

func hasField(fields map[string]any, name string) bool { _, ok := fields[name]; return ok }
