package perftest

import (
	"reflect"
	"testing"
	"time"
)

// TestForHostsHoldsExactlyItsFlows: each host's part of a schedule holds
// the flows it sends or receives, each once and in the schedule's order,
// with the point's ID, epoch and flow count and its own count; a host without flows gets an
// empty part and a host outside the list none.
func TestForHostsHoldsExactlyItsFlows(t *testing.T) {
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Schedule{ID: "run/pt", Epoch: epoch, Flows: []Flow{
		{ID: 0, Src: "a", Dst: "b"},
		{ID: 1, Src: "b", Dst: "c"},
		{ID: 2, Src: "c", Dst: "a", After: []int{0, 1}},
		{ID: 3, Src: "a", Dst: "a"}, // loopback: once in a's part
		{ID: 4, Src: "x", Dst: "b"}, // x is not in the list
	}}
	parts := s.ForHosts([]string{"a", "b", "c", "idle"})
	want := map[string][]int{"a": {0, 2, 3}, "b": {0, 1, 4}, "c": {1, 2}, "idle": {}}
	if len(parts) != len(want) {
		t.Fatalf("parts for %d hosts, want %d", len(parts), len(want))
	}
	for h, ids := range want {
		p := parts[h]
		if p == nil {
			t.Fatalf("no part for %s", h)
		}
		got := []int{}
		for _, f := range p.Flows {
			got = append(got, f.ID)
			if f.Src != h && f.Dst != h {
				t.Errorf("%s's part holds flow %d between %s and %s", h, f.ID, f.Src, f.Dst)
			}
		}
		if !reflect.DeepEqual(got, ids) {
			t.Errorf("%s's part holds flows %v, want %v", h, got, ids)
		}
		if p.HostFlows != len(ids) || p.Flows == nil {
			t.Errorf("%s's part announces %d flows (list nil: %v), holds %d", h, p.HostFlows, p.Flows == nil, len(ids))
		}
		if p.ID != s.ID || !p.Epoch.Equal(epoch) || p.Host != h || p.PointFlows != len(s.Flows) {
			t.Errorf("%s's part: id %q epoch %v host %q point flows %d", h, p.ID, p.Epoch, p.Host, p.PointFlows)
		}
	}
	if !reflect.DeepEqual(parts["c"].Flows[1].After, []int{0, 1}) {
		t.Errorf("a flow's dependencies travel with it: %v", parts["c"].Flows[1].After)
	}
}
