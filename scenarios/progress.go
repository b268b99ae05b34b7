package scenarios

// Progress receives the runner's stages and per-point flow counts. The CLI
// renders it on a terminal; a nil Progress is silent.
type Progress interface {
	Stage(stage, detail string)
	Flows(point string, done, total int)
}

type noProgress struct{}

func (noProgress) Stage(string, string)   {}
func (noProgress) Flows(string, int, int) {}
