package emulator

import "testing"

// TestSysShows: the paths whose answer can differ with a host's /sys tree
// written or not (the root's listing, the tree, the directories above it
// and the names beside them) write it first; others, such as the
// hw_counters the twin serves, leave it unwritten.
func TestSysShows(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/":              true,
		"/sys":           true,
		"/sys/class":     true,
		"/sys/class/net": true,
		"/sys/class/net/ens1f0/ecn/roce_np/enable/3":                  true,
		"/sys/class/net/ens1f0/device":                                true,
		"/sys/kernel":                                                 true,
		"/sys/kernel/debug/mlx5/0000:04:00.0/cc_params/rp_time_reset": true,
		"/sys/foo":              true, // creating it needs /sys
		"/sys/class/infiniband": true, // creating it needs /sys/class
		"/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent": false,
		"/sys/block/vda":               false,
		"/tmp":                         false,
		"/.labctl/runs/x":              false,
		"/etc/sysctl.d/90-labctl.conf": false,
	} {
		if got := sysShows(p); got != want {
			t.Errorf("sysShows(%q) = %v, want %v", p, got, want)
		}
	}
}
