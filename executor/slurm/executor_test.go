package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/testslurm"
)

// fakeWorker stands for labctl worker: it writes point N's result, except
// that the first try of each index listed in fail exits 1 without one.
const fakeWorker = `#!/bin/sh
# fakeWorker --point N RUN_DIR
n=$2; dir=$3
if grep -qx "$n" "$dir/fail" 2>/dev/null && [ ! -e "$dir/tried.$n" ]; then
	touch "$dir/tried.$n"; exit 1
fi
mkdir -p "$dir/points/.$n.tmp" && echo '{"points":[{}]}' > "$dir/points/.$n.tmp/manifest.json" && mv "$dir/points/.$n.tmp" "$dir/points/$n"
`

// TestExecuteRetriesFailedTasks: tasks that end without a result are
// submitted again, only they, until every point has one.
func TestExecuteRetriesFailedTasks(t *testing.T) {
	t.Parallel()
	cl := testslurm.Start(t, 2)
	dir := t.TempDir()
	w := filepath.Join(dir, "worker.sh")
	os.WriteFile(w, []byte(fakeWorker), 0o755)
	os.WriteFile(filepath.Join(dir, "fail"), []byte("1\n4\n"), 0o644)
	var seen []Status
	e := &Executor{Opt: Options{Worker: []string{w}, Retries: 1, Poll: 200 * time.Millisecond, Env: cl.Env,
		Progress: func(s Status) { seen = append(seen, s) }}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.Execute(ctx, dir, []int{0, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if m := Missing(dir, []int{0, 1, 2, 3, 4}); len(m) > 0 {
		t.Fatalf("missing %v", m)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "slurm", "jobs.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"array":"0-4"`) || !strings.Contains(lines[1], `"array":"1,4"`) {
		t.Errorf("submissions:\n%s", b)
	}
	if last := seen[len(seen)-1]; last.Done != 5 || last.Total != 5 || last.Try != 1 {
		t.Errorf("last status %+v", last)
	}
}

// TestExecuteGivesUpAfterRetries: a point that never gets a result is
// named in the error after 1 + Retries submissions.
func TestExecuteGivesUpAfterRetries(t *testing.T) {
	t.Parallel()
	cl := testslurm.Start(t, 2)
	dir := t.TempDir()
	w := filepath.Join(dir, "worker.sh")
	os.WriteFile(w, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	e := &Executor{Opt: Options{Worker: []string{w}, Retries: 1, Poll: 200 * time.Millisecond, Env: cl.Env}}
	err := e.Execute(context.Background(), dir, []int{3})
	if err == nil || !strings.Contains(err.Error(), "1 points have no result after 2 tries: 3") {
		t.Fatalf("err = %v", err)
	}
}

// TestCancelStopsTheArray: when ctx ends, the array is cancelled and no
// task of it is left.
func TestCancelStopsTheArray(t *testing.T) {
	t.Parallel()
	cl := testslurm.Start(t, 2)
	dir := t.TempDir()
	w := filepath.Join(dir, "worker.sh")
	os.WriteFile(w, []byte("#!/bin/sh\nsleep 60\n"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan struct{}, 1)
	e := &Executor{Opt: Options{Worker: []string{w}, Poll: 200 * time.Millisecond, Env: cl.Env, Progress: func(s Status) {
		if s.Running > 0 {
			select {
			case running <- struct{}{}:
			default:
			}
		}
	}}}
	go func() { <-running; cancel() }()
	err := e.Execute(ctx, dir, []int{0, 1, 2})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("err = %v", err)
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _ := cl.Command("squeue", "-h", "-t", "PD,R", "-o", "%i").Output()
		if strings.TrimSpace(string(out)) == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("tasks left after cancel: %s", out)
		}
	}
}
