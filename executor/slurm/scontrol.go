package slurm

import (
	"strconv"
	"strings"
)

// Task is one array task as scontrol shows it. A pending remainder of an
// array is one record whose Indexes are all the tasks not started yet.
type Task struct {
	JobID   string // the task's own job id
	Indexes []int  // ArrayTaskId, expanded
	State   string // JobState: PENDING, RUNNING, COMPLETED, FAILED, ...
	Node    string // NodeList ("" while pending)
}

// terminal says whether a job state is final: the task will not write
// anything any more (a requeued task shows PENDING again).
func terminal(state string) bool {
	switch state {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED":
		return false
	}
	return true
}

// parseShowJob reads `scontrol show job -o ID`: one line per record of
// space-separated Key=Value fields.
func parseShowJob(out string) []Task {
	var tasks []Task
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "JobId=") {
			continue
		}
		var t Task
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "JobId":
				t.JobID = v
			case "ArrayTaskId":
				t.Indexes = expandIndexes(v)
			case "JobState":
				t.State = v
			case "NodeList":
				if v != "(null)" {
					t.Node = v
				}
			}
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// expandIndexes reads an array index list, "0-3,7" or "0-9:2", with an
// optional "%N" throttle.
func expandIndexes(s string) []int {
	s, _, _ = strings.Cut(s, "%")
	var out []int
	for _, part := range strings.Split(s, ",") {
		rng, stepS, hasStep := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		step := 1
		if hasStep {
			if step, err = strconv.Atoi(stepS); err != nil || step < 1 {
				step = 1
			}
		}
		for i := a; i <= b; i += step {
			out = append(out, i)
		}
	}
	return out
}

// IndexList writes sorted, distinct indexes as sbatch --array wants
// them: "0-3,7".
func IndexList(idx []int) string {
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(idx[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	return b.String()
}
