package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/labctl/labctl/archive"
)

// Options say how the array is submitted and followed.
type Options struct {
	// Worker is what each task runs, before "--point N RUN_DIR": the
	// labctl binary as the cluster's nodes see it, "worker", its flags.
	Worker []string
	// Partition, Account, Time (sbatch --time, e.g. "30:00"), CPUs per
	// task and Mem per task (sbatch --mem, e.g. "4G"); empty: the
	// cluster's defaults.
	Partition, Account, Time, Mem string
	CPUs                          int
	// MaxRunning bounds the tasks running at once (--array=...%N; 0: no bound).
	MaxRunning int
	// Extra are more sbatch arguments, passed as they are.
	Extra []string
	// Retries is how many times points left without a result (a task
	// failed, was pre-empted or cancelled) are submitted again.
	Retries int
	// Poll is how often scontrol is asked (default 1s).
	Poll time.Duration
	// Env is added to the environment of sbatch, scontrol and scancel
	// (e.g. SLURM_CONF=...).
	Env      []string
	Progress func(Status)
	Logger   *slog.Logger
}

// Status is where the array is, for a progress bar.
type Status struct {
	JobID                   string
	Try                     int // 0 first submission, then retries
	Total, Done             int // points, and those with a result
	Running, Pending, Ended int // tasks of the current array
}

// Executor is a scenarios.PointExecutor on Slurm.
type Executor struct{ Opt Options }

// Name is recorded in the manifest.
func (e *Executor) Name() string { return "slurm" }

// Execute submits the points of the run in dir that have no result as one
// array, follows it to its end and submits those still missing again, up
// to Opt.Retries times. When ctx ends it cancels the array.
func (e *Executor) Execute(ctx context.Context, dir string, indexes []int) error {
	if len(e.Opt.Worker) == 0 {
		return errors.New("slurm: no worker command")
	}
	dir, err := filepath.Abs(dir) // the tasks run elsewhere
	if err != nil {
		return err
	}
	ad := archive.Open(dir)
	if err := os.MkdirAll(ad.Slurm(), 0o755); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	for try := 0; ; try++ {
		missing := Missing(dir, indexes)
		if len(missing) == 0 {
			return nil
		}
		if try > e.Opt.Retries {
			return fmt.Errorf("slurm: %d points have no result after %d tries: %s", len(missing), try, IndexList(missing))
		}
		if try > 0 {
			e.log().Warn("slurm: resubmitting points without a result", "points", IndexList(missing), "try", try)
		}
		job, err := e.submit(ctx, ad, try, missing)
		if err != nil {
			return err
		}
		if err := e.follow(ctx, dir, job, try, indexes); err != nil {
			return err
		}
	}
}

// Missing are the indexes whose point has no result in dir.
func Missing(dir string, indexes []int) []int {
	var out []int
	for _, i := range indexes {
		if !archive.Open(dir).Part(i).HasManifest() {
			out = append(out, i)
		}
	}
	return out
}

// Submission is one array submitted, as slurm/jobs.jsonl records it.
type Submission struct {
	JobID string `json:"job_id"`
	Try   int    `json:"try"`
	Array string `json:"array"`
}

// submit writes the batch script and submits the array of indexes.
func (e *Executor) submit(ctx context.Context, ad archive.Dir, try int, indexes []int) (string, error) {
	dir, script := ad.Path(), ad.SlurmScript(try)
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# labctl: one point of the run per array task (docs/slurm.md)\nexec")
	for _, a := range e.Opt.Worker {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(` --point "$SLURM_ARRAY_TASK_ID" ` + shellQuote(dir) + "\n")
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		return "", fmt.Errorf("slurm: %w", err)
	}
	array := IndexList(indexes)
	if e.Opt.MaxRunning > 0 {
		array += "%" + strconv.Itoa(e.Opt.MaxRunning)
	}
	args := []string{"--parsable", "--array=" + array, "--job-name=labctl-" + filepath.Base(dir),
		"--output=" + ad.SlurmOutput(), "--chdir=" + dir}
	for _, f := range [][2]string{{"--partition", e.Opt.Partition}, {"--account", e.Opt.Account}, {"--time", e.Opt.Time}, {"--mem", e.Opt.Mem}} {
		if f[1] != "" {
			args = append(args, f[0]+"="+f[1])
		}
	}
	if e.Opt.CPUs > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(e.Opt.CPUs))
	}
	args = append(append(args, e.Opt.Extra...), script)
	out, err := e.command(ctx, "sbatch", args...)
	if err != nil {
		return "", err
	}
	job, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "ID" or "ID;cluster"
	if _, err := strconv.Atoi(job); err != nil {
		return "", fmt.Errorf("slurm: sbatch said %q, not a job id", out)
	}
	rec, _ := json.Marshal(Submission{JobID: job, Try: try, Array: array})
	if f, err := os.OpenFile(ad.SlurmJobs(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_, _ = f.Write(append(rec, '\n'))
		f.Close()
	}
	e.log().Info("slurm: array submitted", "job", job, "array", array)
	return job, nil
}

// follow polls the array until no task of it is left to run; on ctx's end
// it cancels the array.
func (e *Executor) follow(ctx context.Context, dir, job string, try int, all []int) error {
	poll := e.Opt.Poll
	if poll <= 0 {
		poll = time.Second
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		out, err := e.command(ctx, "scontrol", "show", "job", "-o", job)
		if ctx.Err() != nil {
			return e.cancel(job, ctx.Err())
		}
		gone := err != nil && strings.Contains(err.Error(), "Invalid job id")
		if err != nil && !gone {
			e.log().Warn("slurm: scontrol", "job", job, "err", err) // transient: the controller may be busy
		}
		st := Status{JobID: job, Try: try, Total: len(all), Done: len(all) - len(Missing(dir, all))}
		for _, t := range parseShowJob(out) {
			n := max(len(t.Indexes), 1)
			switch {
			case t.State == "RUNNING":
				st.Running += n
			case terminal(t.State):
				st.Ended += n
			default:
				st.Pending += n
			}
		}
		if e.Opt.Progress != nil {
			e.Opt.Progress(st)
		}
		// Gone (purged after MinJobAge) or every task ended: a task is
		// judged by its state, never by its process (which may linger).
		if gone || (err == nil && st.Running == 0 && st.Pending == 0 && st.Ended > 0) {
			return nil
		}
		select {
		case <-ctx.Done():
			return e.cancel(job, ctx.Err())
		case <-tick.C:
		}
	}
}

// cancel stops the array (scancel) and returns why.
func (e *Executor) cancel(job string, why error) error {
	cctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if _, err := e.command(cctx, "scancel", job); err != nil {
		return fmt.Errorf("slurm: array %s not cancelled: %w (after: %w)", job, err, why)
	}
	return fmt.Errorf("slurm: array %s cancelled: %w", job, why)
}

// command runs a Slurm client command and returns its standard output.
func (e *Executor) command(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), e.Opt.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (e *Executor) log() *slog.Logger {
	if e.Opt.Logger != nil {
		return e.Opt.Logger
	}
	return slog.Default()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
