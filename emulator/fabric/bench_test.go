package fabric

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
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
	benchIncast(b, func(topo *Topology) *PacketEngine { return NewPacketEngine(topo, DefaultConfig()) })
}

// BenchmarkPacketEngineIncastHooks is BenchmarkPacketEngineIncast with a
// module on every switch that takes every hook (Select, Arrive on every
// packet at every hop, Dequeue on every departure) and does nearly
// nothing: what the module interface itself costs a scheme.
func BenchmarkPacketEngineIncastHooks(b *testing.B) {
	benchIncast(b, func(topo *Topology) *PacketEngine {
		e, _ := NewPacketEngineLB(topo, DefaultConfig(), &hooks{})
		return e
	})
}

// benchIncast runs BenchmarkPacketEngineIncast's flows b.N times, each on
// a fresh engine from mk, and reports events per CPU second.
func benchIncast(b *testing.B, mk func(*Topology) *PacketEngine) {
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
	cpu := cpuTime(b)
	for i := 0; i < b.N; i++ {
		e := mk(topo)
		if _, err := e.Run(context.Background(), flows, RunOptions{}); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	reportEvents(b, events, cpuTime(b)-cpu)
}

// hooks forwards like ECMP and counts what it sees.
type hooks struct {
	ecmp.Module
	arrived, departed int
}

func (h *hooks) Arrive(_ lb.Switch, p *lb.Packet, _ lb.Egress) lb.Queue {
	h.arrived++
	p.Hdr.Words[0]++
	return lb.Normal
}

func (h *hooks) Dequeue(lb.Switch, *lb.Packet, lb.Egress) { h.departed++ }

// cpuTime is the process's CPU time (user + system) so far: on a shared
// machine, events per CPU second is the figure that means something.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportEvents reports events per op, per wall second and per CPU second
// (run with -cpu 1 so that one core does the work).
func reportEvents(b *testing.B, events uint64, cpu time.Duration) {
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
