package fabric

import (
	"context"
	"fmt"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// BenchmarkFlowEngine: 2000 flows of 1 MiB between random host pairs on a
// 128-host leaf-spine (8 spines x 8 leaves x 16 hosts).
func BenchmarkFlowEngine(b *testing.B) {
	lab, err := inventory.Generate("leafspine:8x8:16@100")
	if err != nil {
		b.Fatal(err)
	}
	topo, err := NewTopology(lab)
	if err != nil {
		b.Fatal(err)
	}
	var flows []Flow
	for i := 0; i < 2000; i++ {
		src, dst := 1+int(mix(uint64(i))%128), 1+int(mix(uint64(i)+7)%128)
		if src == dst {
			dst = 1 + dst%128
		}
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", src), Dst: fmt.Sprintf("h%d", dst), Bytes: 1 << 20, Start: int64(i) * 500})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewFlowEngine(topo, DefaultConfig()).Run(context.Background(), flows, RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPacketEngineIncast: 16 senders x 4 MiB into one port of a
// 128-host leaf-spine (8x8:16 at 100 Gb/s) with PFC and DCQCN; reports
// simulated events per second of wall time.
func BenchmarkPacketEngineIncast(b *testing.B) {
	lab, err := inventory.Generate("leafspine:8x8:16@100")
	if err != nil {
		b.Fatal(err)
	}
	topo, _ := NewTopology(lab)
	var flows []Flow
	for i := 0; i < 16; i++ {
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", 17+i*6), Dst: "h1", Bytes: 4 << 20})
	}
	var events uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := NewPacketEngine(topo, DefaultConfig())
		if _, err := e.Run(context.Background(), flows, RunOptions{}); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}
