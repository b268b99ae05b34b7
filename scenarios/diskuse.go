package scenarios

import (
	"fmt"
	"syscall"
	"time"

	"github.com/labctl/labctl/inventory"
)

// What an emulated run writes into its archive, measured on issue 13's
// fattree:8 point (19,491 flows, 640 switch ports): per flow, the host
// results with both tools' verbatim outputs, gzipped (250 B; 466 B with the
// schedule at fattree:16, 444 B for the 10 ms paper point), the schedule
// (220 B) and its flows.csv row (133 B); per switch port and telemetry
// sample, a port line and about 1.5 queue lines (226 + 1.5 x 164 B).
const (
	archiveBytesPerFlow   = 600
	bytesPerPortSample    = 470
	idleSamplesAllowance  = 120 // samples outside the traffic: while stages run, at most one a second
	trafficSpanOverWindow = 2   // the traffic lasts past its arrival window while the last flows drain
)

// archiveEstimate is about how many bytes an emulated lab's run of pts
// writes into its archive, sampling telemetry every interval (0: none).
func archiveEstimate(pts []Point, lab *inventory.Lab, interval time.Duration) int64 {
	ports := 0
	for _, sw := range lab.Switches {
		ports += len(sw.Ports)
	}
	var total int64
	for _, pt := range pts {
		total += int64(pt.FlowCount) * archiveBytesPerFlow
		if interval > 0 {
			span := time.Duration(max(pt.WindowNs, int64(time.Millisecond)) * trafficSpanOverWindow)
			samples := int64(span/interval) + idleSamplesAllowance
			total += int64(ports) * samples * bytesPerPortSample
		}
	}
	return total
}

// diskFree is the space an unprivileged user may fill on dir's filesystem.
func diskFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// checkArchiveFits refuses a run whose archive (about need bytes) the free space
// of dir cannot hold.
func checkArchiveFits(dir string, need int64, free uint64, flows int) error {
	if need <= 0 || uint64(need) <= free {
		return nil
	}
	return fmt.Errorf("the run's archive needs about %s (%d flows and their telemetry), but %s has only %s free: "+
		"free some space or choose another --out", byteSize(need), flows, dir, byteSize(int64(free)))
}

// byteSize is n in the largest binary unit that keeps it >= 1.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// checkDisk refuses the points of an emulated lab's variant when the
// archive's filesystem cannot hold what they would write.
func (st *runState) checkDisk(pts []Point, sess *session) error {
	interval := sess.interval
	if st.s.Telemetry.Disabled {
		interval = 0
	}
	flows := 0
	for _, pt := range pts {
		flows += pt.FlowCount
	}
	need := archiveEstimate(pts, sess.lab, interval)
	free, err := st.r.DiskFree(st.dir)
	if err != nil {
		return err
	}
	if err := checkArchiveFits(st.dir, need, free, flows); err != nil {
		return err
	}
	st.plan.ArchiveEstimateBytes += need
	return nil
}
