package scenarios

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// planBuiltin loads a built-in scenario and plans it on its own lab.
func planBuiltin(t *testing.T, name string) (*Scenario, *inventory.Lab, *Plan) {
	t.Helper()
	s, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := inventory.Generate(s.Lab)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(s, lab)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s, lab, p
}

// schemeLabels is the scheme of each point, in plan order, without repeats.
func schemeLabels(p *Plan) []string {
	var out []string
	for _, pt := range p.Points {
		if s, _ := pt.Params["scheme"].(string); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestFLBIncastPlansGoodputVsN: flb-incast plans every scheme at N = 25,
// 50, 100, 150 and 200 senders, each sending 100 MB / N to h300, the
// senders spread over all ten leaves; FLB+RC runs with DCQCN off, the
// others with it on.
func TestFLBIncastPlansGoodputVsN(t *testing.T) {
	t.Parallel()
	s, lab, p := planBuiltin(t, "papers/flb-incast")
	if got := strings.Join(schemeLabels(p), ","); got != "ecmp-dcqcn,conga-dcqcn,letflow-dcqcn,flb-rc" {
		t.Errorf("schemes %s", got)
	}
	if len(p.Points) != 20 {
		t.Fatalf("%d points, want 4 schemes x 5 N", len(p.Points))
	}
	for _, pt := range p.Points {
		var total int64
		leaves := map[string]bool{}
		for _, f := range pt.Flows {
			if f.Dst != "h300" || f.Src == "h300" {
				t.Fatalf("%s: flow %s -> %s, want every flow to h300", pt.Name, f.Src, f.Dst)
			}
			total += f.Bytes
			leaves[leafOf(lab, f.Src)] = true
		}
		n := len(pt.Flows)
		if want := pt.Params["n"]; want == nil || want.(string) != strconv.Itoa(n) {
			t.Errorf("%s: %d senders, labelled n=%v", pt.Name, n, want)
		}
		if total < 99_999_000 || total > 100_000_100 {
			t.Errorf("%s: %d bytes in all, want 100 MB", pt.Name, total)
		}
		if len(leaves) != 10 {
			t.Errorf("%s: senders on %d leaves, want all 10", pt.Name, len(leaves))
		}
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		want := DCQCNOn
		if v.Params["scheme"] == "flb-rc" {
			want = DCQCNOff
		}
		if r := v.Scenario.Emulation.RNIC; r == nil || r.DCQCN != want || len(v.Profiles) != 1 {
			t.Errorf("variant %s: rnic %+v, %d derived profiles; want dcqcn %s", v.Label, r, len(v.Profiles), want)
		}
	}
}

// TestFLBWorkloadScenariosPlan: the Data Mining (leaf-spine, 0.8) and Web
// Server (fat-tree, 0.6) scenarios plan the paper's schemes on the same
// flows, on a 3:1 leaf-spine of 300 hosts and a 1:1 fat-tree of 128.
func TestFLBWorkloadScenariosPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schemes string
		hosts         int
		load          float64
	}{
		{"papers/flb-datamining", "ecmp,letflow,ecmp-dcqcn,letflow-dcqcn,flb-rc", 300, 0.8},
		{"papers/flb-webserver", "ecmp,letflow,letflow-dcqcn,flb-rc", 128, 0.6},
	} {
		s, lab, p := planBuiltin(t, tc.name)
		if got := strings.Join(schemeLabels(p), ","); got != tc.schemes {
			t.Errorf("%s: schemes %s, want %s", tc.name, got, tc.schemes)
		}
		if len(lab.Hosts) != tc.hosts || s.Traffic[0].Load != tc.load {
			t.Errorf("%s: %d hosts at load %g", tc.name, len(lab.Hosts), s.Traffic[0].Load)
		}
		first := p.Points[0].Flows
		if len(first) < 50 {
			t.Fatalf("%s: %d flows in the window", tc.name, len(first))
		}
		for _, pt := range p.Points[1:] {
			if len(pt.Flows) != len(first) || pt.Flows[len(first)-1].Bytes != first[len(first)-1].Bytes {
				t.Errorf("%s: point %s has other flows than %s", tc.name, pt.Name, p.Points[0].Name)
			}
		}
	}
}

// TestFLBBurstHasLineRateAndDCQCNVariants: flb-burst runs the paper's
// line-rate ECMP, LetFlow and FLB (DCQCN off) beside the +DCQCN ones.
func TestFLBBurstHasLineRateAndDCQCNVariants(t *testing.T) {
	t.Parallel()
	s, err := Load("papers/flb-burst")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Params["scheme"].(string)+":"+v.Scenario.Emulation.RNIC.DCQCN)
	}
	want := "ecmp:off,letflow:off,flb:off,flb-rc:off,ecmp-dcqcn:on,letflow-dcqcn:on,flb-dcqcn:on,flb-rc-dcqcn:on"
	if strings.Join(got, ",") != want {
		t.Errorf("variants %v\nwant %s", got, want)
	}
}
