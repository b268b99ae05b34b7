package scenarios

import "time"

// Progress receives the runner's stages, points and per-point flow counts.
// The CLI renders it on a terminal; a nil Progress is silent.
type Progress interface {
	Stage(stage, detail string)
	// Point is called when a point starts and when it is finished (ok or
	// failed).
	Point(p PointProgress)
	Flows(point string, done, total int)
}

// PointProgress says where a run is among its points.
type PointProgress struct {
	Point string
	// Index is the point's number (1-based) of Total; Done points are
	// finished, Failed of them failed.
	Index, Total, Done, Failed int
	Finished                   bool   // the point has just finished
	Error                      string // why it failed, when it did
	Elapsed                    time.Duration
	// ETA is the estimated time to the end of the run: the mean time of
	// the points finished so far times the points left (0 before the
	// first has finished).
	ETA time.Duration
}

type noProgress struct{}

func (noProgress) Stage(string, string)   {}
func (noProgress) Point(PointProgress)    {}
func (noProgress) Flows(string, int, int) {}
