package fabric

import (
	"fmt"
	"testing"

	"github.com/labctl/labctl/inventory"
)

type lbOutcome struct {
	maxFCT           int64
	retx, ooo, drops uint64
}

// runLB: 8 flows of 8 MiB from the 8 hosts of leaf1 to the 8 of leaf2,
// over 4 spines: ideal is 2 flows per spine, 50 Gb/s each.
func runLB(t *testing.T, lb, transport string) lbOutcome {
	t.Helper()
	lab, err := inventory.Generate("leafspine:4x2:8@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := NewTopology(lab)
	cfg := DefaultConfig()
	cfg.LB, cfg.Transport, cfg.Seed = lb, transport, 3
	e, err := NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var flows []Flow
	for i := 0; i < 8; i++ {
		flows = append(flows, Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", 9+i), Bytes: 8 * mib})
	}
	var o lbOutcome
	for _, r := range run(t, e, flows) {
		o.maxFCT = max(o.maxFCT, r.End-r.Start)
	}
	for _, p := range e.Counters().Ports {
		o.retx, o.ooo, o.drops = o.retx+p.Retransmits, o.ooo+p.OutOfSequence, o.drops+p.Drops
	}
	return o
}

// TestBaselineOrderings checks, on a small leaf-spine with 8 long flows
// over 4 spines, the qualitative claims of the seeds digest about the
// baselines: per-packet DRILL balances best when reordering is tolerated
// (IRN) and beats ECMP's hash collisions; under go-back-N its reordering
// turns into retransmissions and costs it; LetFlow finds no flowlet gaps
// in paced RDMA traffic and never reorders.
func TestBaselineOrderings(t *testing.T) {
	ecmpGBN, ecmpIRN := runLB(t, "ecmp", "gbn"), runLB(t, "ecmp", "irn")
	drillGBN, drillIRN := runLB(t, "drill", "gbn"), runLB(t, "drill", "irn")
	letflow := runLB(t, "letflow", "gbn")
	t.Logf("max FCT us: ecmp/gbn %d ecmp/irn %d drill/gbn %d (%d retransmits) drill/irn %d letflow %d",
		ecmpGBN.maxFCT/1000, ecmpIRN.maxFCT/1000, drillGBN.maxFCT/1000, drillGBN.retx, drillIRN.maxFCT/1000, letflow.maxFCT/1000)
	if drillIRN.maxFCT >= ecmpGBN.maxFCT || drillIRN.maxFCT >= ecmpIRN.maxFCT {
		t.Error("DRILL with IRN should finish before ECMP")
	}
	if drillGBN.ooo == 0 || drillGBN.retx == 0 || drillGBN.maxFCT <= drillIRN.maxFCT {
		t.Errorf("DRILL with go-back-N should reorder, retransmit and lose to DRILL with IRN: %+v vs %+v", drillGBN, drillIRN)
	}
	if ecmpGBN.ooo != 0 || letflow.ooo != 0 {
		t.Errorf("ECMP and LetFlow (no flowlet gaps) must not reorder: %d, %d", ecmpGBN.ooo, letflow.ooo)
	}
	for _, o := range []lbOutcome{ecmpGBN, drillGBN, letflow} {
		if o.drops != 0 {
			t.Error("lossless runs dropped packets")
		}
	}
}

func TestLBParams(t *testing.T) {
	if _, err := NewLB("letflow", map[string]string{"timeout_us": "-1"}); err == nil {
		t.Error("a negative flowlet timeout was accepted")
	}
	if _, err := NewLB("conga", nil); err == nil {
		t.Error("an unknown module was accepted")
	}
	if _, err := NewLB("drill", map[string]string{"d": "3", "m": "2"}); err != nil {
		t.Error(err)
	}
}
