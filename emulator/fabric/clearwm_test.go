package fabric

import "testing"

// TestClearWatermarks: after ClearWatermarks a queue's watermark is its
// depth (0 on an idle fabric) and ClearedTxPkts its TxPkts, in both
// engines; a later run raises the watermark and TxPkts past them only on
// the queues it uses, so a switch's figures after a clear are that run's.
func TestClearWatermarks(t *testing.T) {
	t.Parallel()
	topo := generated(t, "leafspine:2x4:8@100")
	h1 := PortKey{"leaf1", topo.links[topo.out["h1"][0]].toPort} // the incast's egress
	h3 := PortKey{"leaf1", topo.links[topo.out["h3"][0]].toPort}
	for name, e := range map[string]Engine{"flow": NewFlowEngine(topo, DefaultConfig()), "packet": NewPacketEngine(topo, DefaultConfig())} {
		t.Run(name, func(t *testing.T) {
			run(t, e, incast(16, mib))
			before, _ := e.PortCounters(h1)
			if before.Queues[3].WatermarkBytes == 0 {
				t.Fatal("a 16:1 incast left no watermark at the receiver's egress")
			}
			e.ClearWatermarks()
			for k, p := range e.Counters().Ports {
				for i, q := range p.Queues {
					if q.WatermarkBytes != q.DepthBytes || q.ClearedTxPkts != q.TxPkts {
						t.Fatalf("%v queue %d after the clear: watermark %d depth %d, cleared at %d of %d packets", k, i, q.WatermarkBytes, q.DepthBytes, q.ClearedTxPkts, q.TxPkts)
					}
				}
			}
			run(t, e, []Flow{{ID: 1, Src: "h2", Dst: "h3", Bytes: mib, Priority: 3}})
			idle, _ := e.PortCounters(h1)
			if q := idle.Queues[3]; q.WatermarkBytes != 0 || q.TxPkts != q.ClearedTxPkts || q.TxPkts != before.Queues[3].TxPkts {
				t.Errorf("queue the second run did not use: watermark %d, %d packets since the clear", q.WatermarkBytes, q.TxPkts-q.ClearedTxPkts)
			}
			used, _ := e.PortCounters(h3)
			if q := used.Queues[3]; q.TxPkts <= q.ClearedTxPkts {
				t.Errorf("queue the second run used: %d packets, %d at the clear", q.TxPkts, q.ClearedTxPkts)
			}
		})
	}
}
