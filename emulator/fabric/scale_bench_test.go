package fabric

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"
)

// scaleWindow shortens the arrivals of BenchmarkPacketEngineScale: the
// same fabric and per-host load over less simulated time, short enough
// for a cache simulator (valgrind) at 1,024 hosts.
var scaleWindow = flag.Duration("scale-window", time.Millisecond, "BenchmarkPacketEngineScale: how long flows arrive")

// BenchmarkPacketEngineScale is the scaling issue's workload point on
// fat-trees of 16 to 1,024 hosts: AliStorage flows arriving at 0.5 load for
// 1 ms (seed 1), ECMP, PFC and DCQCN, every flow run to completion. The
// per-host load is the same at every size, so events per CPU second should
// not fall as the fabric grows. Run each k in its own process for its max
// RSS (bench/run.sh): go test -run XXX -bench 'PacketEngineScale/k=16$'
// -benchtime 1x -cpu 1 ./emulator/fabric/
func BenchmarkPacketEngineScale(b *testing.B) {
	for _, k := range []int{4, 8, 12, 16} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			topo, eps := generatedHosts(b, fmt.Sprintf("fattree:%d", k))
			flows := workload(b, eps, "alistorage2019", 0.5, *scaleWindow)
			b.Logf("k=%d: %d hosts, %d flows", k, k*k*k/4, len(flows))
			benchPackets(b, topo, DefaultConfig(), flows)
		})
	}
}

// benchPackets runs flows b.N times on fresh packet engines, reports events
// per op and per CPU second, and logs a fingerprint of the last run's
// results and counters: equal fingerprints of two versions of the engine
// mean identical runs.
func benchPackets(b *testing.B, topo *Topology, cfg Config, flows []Flow) {
	var events uint64
	var e *PacketEngine
	var res []Result
	b.ResetTimer()
	cpu := cpuTime(b)
	for i := 0; i < b.N; i++ {
		e = NewPacketEngine(topo, cfg)
		var err error
		if res, err = e.Run(context.Background(), flows, RunOptions{}); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	reportEvents(b, events, cpuTime(b)-cpu)
	b.ReportMetric(float64(len(flows)), "flows")
	b.StopTimer()
	st := e.ev.stats
	st.buckets, st.events, st.moves = st.buckets+e.ev.win.buckets, st.events+e.ev.win.events, st.moves+e.ev.win.moves
	b.Logf("simulated %d ns; event queue: %.1f events per sorted bucket, %.2f sort moves per event, %d changes of width, last width %d ps",
		e.now/1000, float64(st.events)/float64(st.buckets), float64(st.moves)/float64(st.events), st.regrids, 1<<e.ev.shift)
	b.Logf("fingerprint of results and counters: %s", fingerprint(res, e.Counters()))
}
