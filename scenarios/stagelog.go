package scenarios

import (
	"time"

	"github.com/labctl/labctl/reports"
)

// stageLog passes the runner's progress on and records each stage in the
// run's manifest with its time, so the archive says where the run's wall
// time went. The runner never calls Stage from two goroutines at once.
type stageLog struct {
	Progress
	m *reports.Manifest
}

func (l stageLog) Stage(stage, detail string) {
	l.m.Stages = append(l.m.Stages, reports.StageTime{Stage: stage, Detail: detail, At: time.Now().UTC()})
	l.Progress.Stage(stage, detail)
}
