package fabric

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

var updateFlowGolden = flag.Bool("update-flow-golden", false, "rewrite testdata/flowengine_fattree4.golden")

// TestFlowEngineGolden: the flow engine's per-flow results and port
// counters on fattree:4 (AliStorage at 0.5 load, 1 ms of arrivals, seed 1,
// default quantum, a sample every 100 us) are those of the golden file,
// which the engine wrote before its speed work (issue 13): that work must
// not change what it computes.
func TestFlowEngineGolden(t *testing.T) {
	t.Parallel()
	topo, eps := generatedHosts(t, "fattree:4")
	flows := workload(t, eps, "alistorage2019", 0.5, time.Millisecond)
	e := NewFlowEngine(topo, DefaultConfig())
	samples := 0
	res, err := e.Run(context.Background(), flows, RunOptions{SampleEvery: 100_000, OnSample: func(int64, *Counters) { samples++ }})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# flow engine, fattree:4, alistorage2019 at 0.5 over 1 ms, seed 1: %d flows, %d samples\n", len(res), samples)
	fmt.Fprintln(&b, "# id start_ns end_ns bytes path error")
	for _, r := range res {
		fmt.Fprintf(&b, "%d %d %d %d %s %q\n", r.ID, r.Start, r.End, r.Bytes, strings.Join(r.Path, ">"), r.Err)
	}
	fmt.Fprintln(&b, "# port tx_bytes rx_bytes tx_pkts rx_pkts ecn drops pfc_tx3 pfc_rx3 pause_tx3_ns pause_rx3_ns q3_watermark q3_tx_pkts")
	c := e.Counters()
	var keys []PortKey
	for k := range c.Ports {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Device < keys[j].Device || keys[i].Device == keys[j].Device && keys[i].Port < keys[j].Port
	})
	for _, k := range keys {
		p := c.Ports[k]
		q := p.Queues[roceQueue]
		fmt.Fprintf(&b, "%s/%s %d %d %d %d %d %d %d %d %d %d %d %d\n", k.Device, k.Port, p.TxBytes, p.RxBytes, p.TxPkts, p.RxPkts, p.ECNMarked, p.Drops,
			p.PFCTx[roceQueue], p.PFCRx[roceQueue], p.PauseTxNs[roceQueue], p.PauseRxNs[roceQueue], q.WatermarkBytes, q.TxPkts)
	}
	const path = "testdata/flowengine_fattree4.golden"
	if *updateFlowGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (rerun with -update-flow-golden to write it)", path, err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s line %d:\n got  %s\n want %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", path, len(gl), len(wl))
	}
}
