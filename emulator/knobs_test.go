package emulator

import (
	"context"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// TestTwinKnobsReachTheEngine: the packet engine's conventions a scenario
// sets (Options) are what the lab's engine runs with; left out, the
// engine keeps its defaults.
func TestTwinKnobsReachTheEngine(t *testing.T) {
	t.Parallel()
	src, err := inventory.Generate("leafspine:1x2:1@100")
	if err != nil {
		t.Fatal(err)
	}
	off, two := false, 2
	for _, tc := range []struct {
		name string
		opt  Options
		want func(*fabric.Config)
	}{
		{"defaults", Options{}, func(*fabric.Config) {}},
		{"set", Options{NackIntervalNs: -1, CNPOnNack: &off, PauseQuanta: 1000, PauseRefreshNs: 2500, ReorderQueues: &two},
			func(c *fabric.Config) {
				c.NackIntervalNs, c.CNPOnNack, c.PauseQuanta, c.PauseRefreshNs, c.ReorderQueues = -1, false, 1000, 2500, 2
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.opt.Dir = t.TempDir()
			l, err := Start(context.Background(), src, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			want := fabric.DefaultConfig()
			tc.want(&want)
			var got fabric.Config
			l.twin.engine.(*fabric.PacketEngine).Configure(func(c *fabric.Config) { got = *c })
			if got.NackIntervalNs != want.NackIntervalNs || got.CNPOnNack != want.CNPOnNack || got.PauseQuanta != want.PauseQuanta ||
				got.PauseRefreshNs != want.PauseRefreshNs || got.ReorderQueues != want.ReorderQueues {
				t.Errorf("engine runs with nack %d cnp-on-nack %v quanta %d refresh %d reorder queues %d, want %d %v %d %d %d",
					got.NackIntervalNs, got.CNPOnNack, got.PauseQuanta, got.PauseRefreshNs, got.ReorderQueues,
					want.NackIntervalNs, want.CNPOnNack, want.PauseQuanta, want.PauseRefreshNs, want.ReorderQueues)
			}
		})
	}
}
