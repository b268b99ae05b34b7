package reports

import (
	"fmt"
	"math"
	"testing"
)

// TestWindowsOfExecutorPoints: points an executor ran on labs of their
// own keep their whole window even when others overlap it, and take only
// samples tagged with their name.
func TestWindowsOfExecutorPoints(t *testing.T) {
	t.Parallel()
	metas := []PointMeta{{Name: "a", StartNs: 0, EndNs: 100, Executor: "slurm"}, {Name: "b", StartNs: 50, EndNs: 200, Executor: "slurm"}}
	got := windows(metas, 10)
	want := []window{{start: 0, end: 110, trafficEnd: 100, hostEnd: math.MaxInt64, own: "a"},
		{start: 50, end: 210, trafficEnd: 200, hostEnd: math.MaxInt64, own: "b"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v want %v", got, want)
	}
}
