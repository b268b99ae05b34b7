package hf2t

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

// TestFlowletTimeoutSweep is the sweep behind flowlet_us's default (the
// paper gives no value): LetFlow alone, LetFlow + HF²T without and with
// dynamic T, each at matched timeouts, on the k = 4 fat-tree with Web
// Search at 0.7 for 5 ms, two draws. It prints a table and asserts
// nothing; docs/fabric-twin.md keeps its output. Run it with
//
//	LABCTL_HF2T_SWEEP=1 go test -run TestFlowletTimeoutSweep -v ./emulator/fabric/hostlb/hf2t/
func TestFlowletTimeoutSweep(t *testing.T) {
	if os.Getenv("LABCTL_HF2T_SWEEP") == "" {
		t.Skip("set LABCTL_HF2T_SWEEP=1: about a minute of simulation")
	}
	fmt.Println("| seed | flows | timeout us | LetFlow flowlets / PAUSE / avg FCT us | + HF²T no dyn. T: flowlets / PAUSE / avg FCT / held | + HF²T: flowlets / PAUSE / avg FCT / held |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, seed := range []int64{1, 2} {
		topo, flows := lbtest.WebSearch(t, "fattree:4@100", 0.7, 5*time.Millisecond, seed)
		for _, to := range []string{"5", "10", "25", "50", "100"} {
			a := runFatTree(t, topo, flows, to, false, nil)
			s := runFatTree(t, topo, flows, to, true, map[string]string{"dynamic": "false"})
			d := runFatTree(t, topo, flows, to, true, nil)
			fmt.Printf("| %d | %d | %s | %d / %d / %.1f | %d / %d / %.1f / %d | %d / %d / %.1f / %d |\n", seed, len(flows), to,
				a.flowlets, a.pauses, a.avgFCT/1e3, s.flowlets, s.pauses, s.avgFCT/1e3, s.stretched, d.flowlets, d.pauses, d.avgFCT/1e3, d.stretched)
		}
	}
}
