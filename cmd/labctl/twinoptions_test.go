package main

import (
	"testing"

	"github.com/labctl/labctl/scenarios"
)

// TestTwinOptions: a scenario's knobs become the emulated lab's options in
// the engine's units; a NACK interval of 0 means once per PSN.
func TestTwinOptions(t *testing.T) {
	t.Parallel()
	zero, four, off, q := 0.0, 4.5, false, 3
	for _, tc := range []struct {
		k                  scenarios.Knobs
		nack, refresh      int64
		quanta             uint16
		cnpSet, reorderSet bool
	}{
		{scenarios.Knobs{}, 0, 0, 0, false, false},
		{scenarios.Knobs{NackIntervalUs: &zero}, -1, 0, 0, false, false},
		{scenarios.Knobs{NackIntervalUs: &four, PFCRefreshUs: 2.5, PFCPauseQuanta: 1000, CNPOnNack: &off, ReorderQueues: &q}, 4500, 2500, 1000, true, true},
	} {
		o := twinOptions(scenarios.Emulation{Knobs: tc.k})
		if o.NackIntervalNs != tc.nack || o.PauseRefreshNs != tc.refresh || o.PauseQuanta != tc.quanta ||
			(o.CNPOnNack != nil) != tc.cnpSet || (o.ReorderQueues != nil) != tc.reorderSet {
			t.Errorf("%+v: options %+v", tc.k, o)
		}
	}
}
