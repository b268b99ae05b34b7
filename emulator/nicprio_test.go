package emulator

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
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

// TestAdHocPerftestTrafficClass: an ad-hoc perftest client sends with the
// ToS its command line or the device's RDMA-CM default gives.
func TestAdHocPerftestTrafficClass(t *testing.T) {
	lab := mustLab(t)
	h := newHost(&Lab{inbox: map[string]bool{}}, lab.Hosts[0], t.TempDir())
	dev := lab.Hosts[0].RNICs[0].Device
	h.tos[dev] = 106
	for _, tc := range []struct {
		args string
		want int
	}{
		{"ib_write_bw -d mlx5_0 10.0.0.2", 0},
		{"ib_write_bw -d mlx5_0 --tclass=98 10.0.0.2", 98},
		{"ib_write_bw -d mlx5_0 -R 10.0.0.2", 106},
		{"ib_write_bw -d mlx5_0 -R -T 104 10.0.0.2", 104},
	} {
		inv, err := perftest.ParseArgs(strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.trafficClass(inv, dev); got != tc.want {
			t.Errorf("%s: traffic class %d, want %d", tc.args, got, tc.want)
		}
	}
}
