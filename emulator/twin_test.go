package emulator

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/perftest"
)

// TestTwinGathersAPointFromItsHosts: the twin simulates a point only when
// every host's part has brought its flows (each flow from its sender),
// once for all hosts, and every host gets every flow's result; a host that
// gives up before the point is complete leaves nothing behind, and the
// point runs when all come back.
func TestTwinGathersAPointFromItsHosts(t *testing.T) {
	t.Parallel()
	tw := newTwin(fabric.NewFlowEngine(mustTopo(t), fabric.Config{}), map[string]publisher{}, slog.New(slog.DiscardHandler))
	whole := &perftest.Schedule{ID: "run/point", Epoch: time.Now(), Flows: []perftest.Flow{
		{ID: 0, Src: "h1", Dst: "h2", Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1},
		{ID: 1, Src: "h2", Dst: "h1", Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1},
	}}
	parts := whole.ForHosts([]string{"h1", "h2"})

	// h1 alone: the point is incomplete; h1 gives up, and the point is
	// no longer gathering.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, _, err := tw.SubmitFlows(ctx, parts["h1"]); err == nil {
		t.Fatal("a point missing h2's flows was simulated")
	}
	cancel()
	tw.runsMu.Lock()
	left := len(tw.gather) + len(tw.runs)
	tw.runsMu.Unlock()
	if left != 0 {
		t.Fatalf("%d points left gathering or running after every host gave up", left)
	}

	var wg sync.WaitGroup
	results := make([]map[int]fabric.Result, 2)
	for i, h := range []string{"h1", "h2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, res, err := tw.SubmitFlows(context.Background(), parts[h])
			if err != nil {
				t.Errorf("%s: %v", h, err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	for i, res := range results {
		if len(res) != 2 || res[0].End == 0 || res[1].End == 0 {
			t.Errorf("host %d got results %v, want both flows'", i, res)
		}
	}
	tw.runsMu.Lock()
	defer tw.runsMu.Unlock()
	if len(tw.runs) != 1 || len(tw.gather) != 0 {
		t.Errorf("%d runs, %d gathering: the point must have been simulated once", len(tw.runs), len(tw.gather))
	}
}
