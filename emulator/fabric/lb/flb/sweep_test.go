package flb_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
)

// TestDefaultsSweep is the sweep behind the defaults the paper leaves
// out: k_pos (where K lies in Appendix A's range), aging_tick_us and
// stamp_at, each varied alone from the defaults on the bursty
// micro-benchmark over three seeds; then FLB+RC's restore_us (seed 1). It prints a table (f0+f1 and f2
// during the burst, PAUSE frames, packets out of sequence, when the burst
// was done) and asserts nothing; docs/fabric-twin.md keeps its output.
// Run it with
//
//	LABCTL_FLB_SWEEP=1 go test -run TestDefaultsSweep -v ./emulator/fabric/lb/flb/
func TestDefaultsSweep(t *testing.T) {
	if os.Getenv("LABCTL_FLB_SWEEP") == "" {
		t.Skip("set LABCTL_FLB_SWEEP=1: about a minute of simulation")
	}
	topo, fs := microTopology(t), microFlows()
	fmt.Println("| parameter | value | f0+f1 during burst Gb/s (seeds 1/2/3) | f2 Gb/s | PAUSE frames | out of sequence | burst done ms |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, sw := range []struct {
		name string
		vals []string
	}{{"k_pos", []string{"0", "0.25", "0.5", "0.75", "1"}}, {"aging_tick_us", []string{"0.25", "1", "4"}}, {"stamp_at", []string{"arrival", "departure"}}} {
		for _, v := range sw.vals {
			var row [5]string
			for _, seed := range []int64{1, 2, 3} {
				o := runMicro(t, topo, fs, "flb", map[string]string{sw.name: v}, "", func(c *fabric.Config) { c.Seed = seed })
				var pauses uint64
				for _, n := range o.pauses {
					pauses += n
				}
				for i, s := range []string{fmt.Sprintf("%.1f", o.burst[0]+o.burst[1]), fmt.Sprintf("%.1f", o.burst[2]),
					fmt.Sprint(pauses), fmt.Sprint(o.ooo), fmt.Sprintf("%.2f", float64(o.burstEnd)/1e6)} {
					if seed > 1 {
						row[i] += "/"
					}
					row[i] += s
				}
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", sw.name, v, row[0], row[1], row[2], row[3], row[4])
		}
	}
	fmt.Println()
	fmt.Println("| FLB+RC restore_us | f0+f1 during burst Gb/s | f2 FCT ms | burst done ms | PAUSE frames | hosts' pauses | out of sequence |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, v := range []string{"0", "250", "500", "1000", "5000"} {
		o := runMicro(t, topo, fs, "flb", nil, "flbrc", func(c *fabric.Config) { c.HostLBParams = map[string]string{"restore_us": v} })
		var pauses uint64
		for _, n := range o.pauses {
			pauses += n
		}
		fmt.Printf("| %s | %.1f | %.2f | %.2f | %d | %d | %d |\n", v, o.burst[0]+o.burst[1], float64(o.fcts[2])/1e6, float64(o.burstEnd)/1e6, pauses, o.host.Pauses, o.ooo)
	}
}
