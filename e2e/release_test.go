package e2e_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/scenarios"
)

// heldRelease is a LabSource whose release cannot end before the run has
// said it waits for it (a release stage after the analysis began): a
// runner that released the lab before analysing, or analysed without
// waiting, never lets it end (it gives up after a minute and says so).
type heldRelease struct {
	labs     *emulatedLabs
	mu       sync.Mutex
	stages   []string
	waiting  chan struct{} // closed when the runner says it waits for the release
	released chan struct{} // closed when the release has ended
	gaveUp   bool
}

func (h *heldRelease) Open(ctx context.Context, name string, em scenarios.Emulation) (*inventory.Lab, func(), error) {
	lab, release, err := h.labs.Open(ctx, name, em)
	if err != nil {
		return nil, nil, err
	}
	return lab, func() {
		defer close(h.released)
		release()
		select {
		case <-h.waiting:
		case <-time.After(time.Minute):
			h.gaveUp = true
		}
	}, nil
}

func (h *heldRelease) Stage(stage, detail string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stages = append(h.stages, stage+"|"+detail)
	if stage == scenarios.StageRelease && strings.Contains(detail, "waiting") && len(h.stages) > 1 {
		for _, s := range h.stages {
			if strings.HasPrefix(s, scenarios.StageAnalyse+"|") {
				close(h.waiting)
				return
			}
		}
	}
}

func (h *heldRelease) Point(scenarios.PointProgress) {}
func (h *heldRelease) Flows(string, int, int)        {}

// TestReleaseOverlapsAnalysis: the lab a run started is released while
// the run analyses its archive (which needs no lab), and the run ends
// only once the release has: its manifest's stages say release, analyse,
// release (waiting), done, in that order.
func TestReleaseOverlapsAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s, err := scenarios.Parse([]byte(`name: overlap
lab: leafspine:1x2:3@100
traffic:
  - {name: w, pattern: workload, cdf: websearch, load: 0.3, duration: 200us}
`), "overlap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldRelease{labs: &emulatedLabs{t: t}, waiting: make(chan struct{}), released: make(chan struct{})}
	r := &scenarios.Runner{Labs: h, Progress: h, OutDir: t.TempDir(), AgentPath: fakeAgent(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.released:
	default:
		t.Fatal("the run ended before its lab's release did")
	}
	if h.gaveUp {
		t.Fatalf("the release never saw the run wait for it after the analysis began; stages %q", h.stages)
	}
	var got []string
	for _, st := range readManifest(t, out.Dir).Stages {
		if st.Stage == scenarios.StageRelease || st.Stage == scenarios.StageAnalyse || st.Stage == scenarios.StageDone {
			got = append(got, st.Stage)
		}
	}
	if want := []string{"release", "analyse", "release", "done"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("manifest's last stages %q, want %q", got, want)
	}
}
