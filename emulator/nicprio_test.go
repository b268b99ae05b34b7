package emulator

import (
	"context"
	"testing"
)

// TestNICPriorityFollowsTrustAndDSCPMap: the priority an emulated RNIC
// sends a traffic class on is what its mlnx_qos settings say: 0 with trust
// pcp (untagged frames), the DSCP's dscp2prio entry with trust dscp.
func TestNICPriorityFollowsTrustAndDSCPMap(t *testing.T) {
	lab := mustLab(t)
	l := &Lab{inbox: map[string]bool{}, hosts: map[string]*host{}}
	inv := lab.Hosts[0]
	h := newHost(l, inv, t.TempDir())
	l.hosts[inv.Name] = h
	dev, netdev := inv.RNICs[0].Device, inv.RNICs[0].Netdev
	mlnxQoS := func(args ...string) {
		t.Helper()
		e := &fakeSession{}
		if st := h.mlnxQoS(context.Background(), append([]string{"mlnx_qos", "-i", netdev}, args...), e.session()); st != 0 {
			t.Fatalf("mlnx_qos %v: %d %s%s", args, st, e.out.String(), e.err.String())
		}
	}
	for _, tc := range []struct {
		setup []string
		want  int
	}{
		{nil, 0},                                 // ConnectX default: trust pcp
		{[]string{"--trust", "dscp"}, 3},         // DSCP 26 -> 26>>3
		{[]string{"--dscp2prio", "set,26,5"}, 5}, // the host's own map
		{[]string{"--trust", "pcp"}, 0},
	} {
		if tc.setup != nil {
			mlnxQoS(tc.setup...)
		}
		if got := l.nicPriority(inv.Name, dev, 106); got != tc.want {
			t.Errorf("after mlnx_qos %v: ToS 106 goes out on priority %d, want %d", tc.setup, got, tc.want)
		}
	}
	if got := l.nicPriority("nosuchhost", dev, 106); got != 3 {
		t.Errorf("unknown host: priority %d, want the RoCE default 3", got)
	}
}
