package schemes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

func TestRegistryHasEverySchemeWithItsParams(t *testing.T) {
	t.Parallel()
	r, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scheme string
		params []string
	}{{"ecmp", nil}, {"letflow", []string{"timeout_us"}}, {"drill", []string{"d", "m"}},
		{"conga", []string{"flowlet_timeout_us", "dre_period_us", "dre_alpha", "quant_bits", "metric_age_us"}},
		{"selb", []string{"k", "period_us", "theta", "inactive_us", "ctrl_bytes", "reorder_margin_us", "reorder_wait_us"}},
		{"gemma", []string{"alpha", "beta", "ref_kb", "s_reroute", "gap", "report_min_us", "report_max_us", "report_change_kb",
			"scan_us", "clear_timeout_us", "ctrl_bytes", "reorder_margin_us", "reorder_wait_us"}},
		{"reunion", []string{"interval_us", "tolerance", "high_util", "cms_epsilon", "cms_delta", "cms_decay", "flowlet_timeout_us", "ctrl_bytes"}}} {
		ps, ok := r.Params(tc.scheme)
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
			if p.Help == "" {
				t.Errorf("%s.%s has no help", tc.scheme, p.Name)
			}
		}
		if !ok || strings.Join(names, ",") != strings.Join(tc.params, ",") {
			t.Errorf("%s: params %v (registered %v), want %v", tc.scheme, names, ok, tc.params)
		}
	}
	for _, tc := range []struct {
		scheme string
		params map[string]string
		ok     bool
	}{
		{"letflow", map[string]string{"timeout_us": "-1"}, false},
		{"letflow", map[string]string{"timeout_us": "10"}, true},
		{"drill", map[string]string{"d": "3", "m": "2"}, true},
		{"drill", map[string]string{"d": "0"}, false},
		{"conga", map[string]string{"flowlet_timeout_us": "0.5", "quant_bits": "4"}, true},
		{"conga", map[string]string{"dre_alpha": "1.5"}, false},
		{"conga", map[string]string{"quant_bits": "2.5"}, false},
		{"congo", nil, false},
		{"selb", map[string]string{"k": "0"}, false},
		{"selb", map[string]string{"theta": "500", "period_us": "2"}, true},
	} {
		if _, err := r.New(tc.scheme, tc.params); (err == nil) != tc.ok {
			t.Errorf("%s %v: %v", tc.scheme, tc.params, err)
		}
	}
}

type lbOutcome struct {
	maxFCT           int64
	retx, ooo, drops uint64
}

// runLB: 8 flows of 8 MiB from the 8 hosts of leaf1 to the 8 of leaf2,
// over 4 spines: ideal is 2 flows per spine, 50 Gb/s each.
func runLB(t *testing.T, scheme, transport string) lbOutcome {
	t.Helper()
	lab, err := inventory.Generate("leafspine:4x2:8@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := fabric.NewTopology(lab)
	cfg := fabric.DefaultConfig()
	cfg.LB, cfg.Transport, cfg.Seed, cfg.Modules = scheme, transport, 3, MustRegistry()
	e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var flows []fabric.Flow
	for i := 0; i < 8; i++ {
		flows = append(flows, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", i+1), Dst: fmt.Sprintf("h%d", 9+i), Bytes: 8 << 20})
	}
	res, err := e.Run(context.Background(), flows, fabric.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var o lbOutcome
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("%s/%s: flow %d: %s", scheme, transport, r.ID, r.Err)
		}
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
	t.Parallel()
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

// TestRunsRepeatOnOneEngine: a point's results do not depend on what the
// engine ran before (the emulated lab runs a matrix's points one after
// another on one engine): the same flows twice give the same FCTs, for
// every scheme.
func TestRunsRepeatOnOneEngine(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:2x2:4@100")
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := fabric.NewTopology(lab)
	var flows []fabric.Flow
	for i := 0; i < 12; i++ { // an incast and cross traffic: ECN marks, PFC, choices
		flows = append(flows, fabric.Flow{ID: i, Src: fmt.Sprintf("h%d", 2+i%7), Dst: fmt.Sprintf("h%d", 1+(i%3)*4), Bytes: int64(64<<10) * int64(1+i%5), Start: int64(i) * 700})
	}
	for _, scheme := range MustRegistry().Names() {
		cfg := fabric.DefaultConfig()
		cfg.LB, cfg.Seed, cfg.Modules = scheme, 5, MustRegistry()
		e, err := fabric.NewPacketEngineLB(topo, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var fcts [2][]int64
		for run := range fcts {
			res, err := e.Run(context.Background(), flows, fabric.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				fcts[run] = append(fcts[run], r.End-r.Start)
			}
		}
		if !slices.Equal(fcts[0], fcts[1]) {
			t.Errorf("%s: a second run of the same flows differs:\n%v\n%v", scheme, fcts[0], fcts[1])
		}
	}
}
