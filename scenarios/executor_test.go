package scenarios

import (
	"testing"

	"github.com/labctl/labctl/inventory"
)

// TestPlanPointsKeepsHardwareHere: PlanPoints plans every point of the
// matrix in run order and marks those of an emulated lab for an executor,
// never those of a hardware lab (one lab cannot serve several tasks).
func TestPlanPointsKeepsHardwareHere(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`name: p
traffic:
  - {name: w, pattern: workload, cdf: websearch, load: 0.3, duration: 100us}
repetitions: 2
matrix:
  - {path: "traffic[0].load", values: [0.3, 0.5]}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	emu, err := inventory.Generate("leafspine:1x2:2@100")
	if err != nil {
		t.Fatal(err)
	}
	hw := *emu
	hw.Emulated = false
	for _, tc := range []struct {
		lab    *inventory.Lab
		remote bool
	}{{emu, true}, {&hw, false}} {
		r := &Runner{Lab: tc.lab}
		plan, remote, err := r.PlanPoints(s)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"w/load=0.3/rep0", "w/load=0.3/rep1", "w/load=0.5/rep0", "w/load=0.5/rep1"}
		if len(plan.Points) != len(want) || len(remote) != len(want) {
			t.Fatalf("%d points, %d flags", len(plan.Points), len(remote))
		}
		for i, p := range plan.Points {
			if p.Name != want[i] || remote[i] != tc.remote || p.Flows != nil || p.FlowCount == 0 {
				t.Errorf("emulated=%v: point %d: %s remote=%v flows %d", tc.lab.Emulated, i, p.Name, remote[i], p.FlowCount)
			}
		}
	}
}
