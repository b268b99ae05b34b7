// Package agent is the host agent: it runs this host's part of a traffic
// schedule by spawning perftest processes (servers shortly before the
// flows it receives, a bounded number at a time; clients at epoch+offset
// for the flows it sends) and reports per-flow start/end times and the
// tools' verbatim output. It never leaves a process behind: every child
// runs in its own process group, killed on cancellation.
//
// Main is the agent's command line, run by the labctl-agent binary
// (cmd/labctl-agent) on real hosts and by emulated hosts, which swap only
// how the flows run (Env.Execute); layout.go says where the agent and a
// run's files live on a host. It is what goes to every host: nothing
// beyond perftest and the standard library.
//
// Imports within labctl: only perftest.
package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/labctl/labctl/perftest"
)

// Options of a run.
type Options struct {
	Self         string            // this host's name in the schedule
	Bin          map[string]string // tool -> path (default: looked up on PATH)
	ConnectRetry time.Duration     // how long a client retries a server that is not up (default 10s)
	// ServerGrace is how long servers may still wait for their client once
	// this host's own clients are done and every flow it receives was due
	// (default 60s): a sender that was skipped on another host never
	// comes, and no process may linger.
	ServerGrace time.Duration
	// ServerLead is how long before its flow's planned start (epoch +
	// offset) a server is started (default 200ms). Servers
	// start in the order of their flows' offsets; the server of a flow
	// that waits for others starts by its offset too, its client later.
	ServerLead time.Duration
	// MaxServers bounds the perftest servers running at once (default
	// 256): a server whose slot is not free in time starts
	// late, and its client retries connecting for ConnectRetry.
	MaxServers int
	// MaxConcurrent bounds the perftest clients running at once (0: no
	// bound; `labctl run --max-concurrent`). A flow whose offset comes
	// while every slot is taken starts when one frees, late.
	MaxConcurrent int
	// LateTolerance is how far after epoch+offset a client may start and
	// still count as on time (default DefaultLateTolerance); see Result.Late.
	LateTolerance time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
}

// Defaults of Options.
const (
	defaultServerLead = 200 * time.Millisecond
	defaultMaxServers = 256
)

// DefaultLateTolerance is Options.LateTolerance unless set: about what
// starting a perftest process costs.
const DefaultLateTolerance = time.Millisecond

func (o *Options) defaults() {
	if o.ConnectRetry <= 0 {
		o.ConnectRetry = 10 * time.Second
	}
	if o.ServerGrace <= 0 {
		o.ServerGrace = 60 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LateTolerance <= 0 {
		o.LateTolerance = DefaultLateTolerance
	}
	if o.ServerLead <= 0 {
		o.ServerLead = defaultServerLead
	}
	if o.MaxServers <= 0 {
		o.MaxServers = defaultMaxServers
	}
}

// procs tracks running children so that every exit path kills them.
type procs struct {
	ctx context.Context
	mu  sync.Mutex
	set map[*exec.Cmd]bool
}

// start runs cmd in its own process group, unless the run is over.
func (p *procs) start(cmd *exec.Cmd) error {
	// Own process group (killed as a whole), and killed by the kernel if
	// the agent itself dies, so nothing outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p.set[cmd] = true
	return nil
}

func (p *procs) done(cmd *exec.Cmd) { p.mu.Lock(); delete(p.set, cmd); p.mu.Unlock() }

func (p *procs) killAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for cmd := range p.set {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Run executes this host's part of s.
func Run(ctx context.Context, s *perftest.Schedule, o Options) (*Result, error) {
	o.defaults()
	if err := lookTools(o, s); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ps := &procs{ctx: ctx, set: map[*exec.Cmd]bool{}}
	defer ps.killAll()
	go func() { <-ctx.Done(); ps.killAll() }()
	res := &Result{Host: o.Self, ScheduleID: s.ID, EpochNs: s.Epoch.UnixNano(), MaxConcurrent: o.MaxConcurrent}
	var slots chan struct{} // nil: unbounded
	if o.MaxConcurrent > 0 {
		slots = make(chan struct{}, o.MaxConcurrent)
	}
	// done[id] is closed when a flow this host can observe has finished;
	// failed[id] says whether it failed.
	done := map[int]chan struct{}{}
	var failedMu sync.Mutex
	failed := map[int]bool{}
	var recv []perftest.Flow
	var lastDue time.Time // when the last flow this host receives is due
	for _, f := range s.Flows {
		if f.Src == o.Self || f.Dst == o.Self {
			done[f.ID] = make(chan struct{})
		}
		if f.Dst == o.Self {
			recv = append(recv, f)
			if at := s.Epoch.Add(f.Offset); at.After(lastDue) {
				lastDue = at
			}
		}
	}
	finish := func(id int, ok bool) {
		failedMu.Lock()
		failed[id] = !ok
		failedMu.Unlock()
		close(done[id])
	}
	var wg, clients sync.WaitGroup
	var mu sync.Mutex
	graceExpired := false
	srv := &servers{o: o, ps: ps, epoch: s.Epoch, stop: make(chan struct{}),
		exited: func(f perftest.Flow, sr ServerRun, ok bool) {
			mu.Lock()
			if graceExpired && !ok && sr.StartNs != 0 {
				sr.Stderr += fmt.Sprintf("labctl agent: no client connected within %v after this host's flows ended; server killed\n", o.ServerGrace)
			}
			res.Servers = append(res.Servers, sr)
			mu.Unlock()
			if f.Src != o.Self { // when this host also sends it, the client decides
				finish(f.ID, ok)
			}
		}}
	wg.Add(1)
	go func() { defer wg.Done(); srv.run(ctx, recv, &wg) }()
	for _, f := range s.Flows {
		if f.Src != o.Self {
			continue
		}
		wg.Add(1)
		clients.Add(1)
		go func() {
			defer wg.Done()
			defer clients.Done()
			rec := runClient(ctx, o, ps, slots, s.Epoch, f, done, func(id int) bool {
				failedMu.Lock()
				defer failedMu.Unlock()
				return failed[id]
			})
			mu.Lock()
			res.Records = append(res.Records, rec)
			mu.Unlock()
			finish(f.ID, rec.Status == perftest.StatusOK)
		}()
	}
	allDone := make(chan struct{})
	go func() {
		clients.Wait()
		// The grace counts from when this host's clients are done and the
		// last flow it receives was due, whichever is later.
		select {
		case <-time.After(time.Until(lastDue)):
		case <-allDone:
			return
		}
		select {
		case <-time.After(o.ServerGrace):
			mu.Lock()
			graceExpired = true
			mu.Unlock()
			close(srv.stop)
			ps.killAll()
		case <-allDone:
		}
	}()
	wg.Wait()
	close(allDone)
	sort.Slice(res.Records, func(i, j int) bool { return res.Records[i].FlowID < res.Records[j].FlowID })
	sort.Slice(res.Servers, func(i, j int) bool { return res.Servers[i].FlowID < res.Servers[j].FlowID })
	res.countLate(o.LateTolerance)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("host %s: schedule %s: %w", o.Self, s.ID, err)
	}
	return res, nil
}

// lookTools fails before anything starts when a tool this host needs is
// missing.
func lookTools(o Options, s *perftest.Schedule) error {
	seen := map[string]bool{}
	for _, f := range s.Flows {
		if (f.Src != o.Self && f.Dst != o.Self) || seen[f.Tool] {
			continue
		}
		seen[f.Tool] = true
		if _, err := exec.LookPath(o.binary(f.Tool)); err != nil {
			return fmt.Errorf("host %s: %w", o.Self, err)
		}
	}
	return nil
}

// binary is the program that runs tool: Bin's, else the tool on PATH.
func (o Options) binary(tool string) string {
	if p, ok := o.Bin[tool]; ok {
		return p
	}
	return tool
}

func command(o Options, argv []string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(o.binary(argv[0]), argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func runClient(ctx context.Context, o Options, ps *procs, slots chan struct{}, epoch time.Time, f perftest.Flow,
	done map[int]chan struct{}, failed func(int) bool) perftest.FlowRecord {
	rec := perftest.FlowRecord{FlowID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Tool: f.Tool, Group: f.Group, Step: f.Step}
	// Wait for the dependencies this host can see (see perftest.RingAllReduce).
	for _, a := range f.After {
		ch, ok := done[a]
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			rec.Status, rec.Error = perftest.StatusFailed, ctx.Err().Error()
			return rec
		}
		if failed(a) {
			rec.Status, rec.Error = perftest.StatusSkipped, fmt.Sprintf("flow %d it depends on failed", a)
			return rec
		}
	}
	planned := epoch.Add(f.Offset)
	if wait := planned.Sub(o.Now()); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			rec.Status, rec.Error = perftest.StatusFailed, ctx.Err().Error()
			return rec
		}
	}
	if slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			rec.Status, rec.Error = perftest.StatusFailed, ctx.Err().Error()
			return rec
		}
	}
	argv := perftest.Args(f, perftest.Client)
	deadline := o.Now().Add(o.ConnectRetry)
	backoff := 20 * time.Millisecond
	for {
		cmd, stdout, stderr := command(o, argv)
		start := o.Now()
		if err := ps.start(cmd); err != nil {
			rec.Status, rec.Error = perftest.StatusFailed, fmt.Sprintf("start %s: %v", argv[0], err)
			return rec
		}
		err := cmd.Wait()
		end := o.Now()
		ps.done(cmd)
		rec.StartNs, rec.EndNs, rec.Output = start.UnixNano(), end.UnixNano(), stdout.String()
		if len(f.After) == 0 { // a dependent flow has no planned start to be late for
			rec.LagNs = max(start.UnixNano()-planned.UnixNano(), 0) // on the records' (wall) clock
		}
		if err == nil {
			// stderr too: perftest's error lines go there, and exit 0 with
			// a "Did not get Message" line is still a failed run.
			rep, perr := perftest.ParseBW(stdout.String() + stderr.String())
			if perr != nil {
				rec.Status, rec.Error = perftest.StatusFailed, perr.Error()
				return rec
			}
			rec.Status, rec.Result = perftest.StatusOK, &rep.Rows[len(rep.Rows)-1]
			return rec
		}
		te := perftest.ClassifyError(stdout.String() + stderr.String())
		if te != nil && te.Kind == perftest.ConnectFailed && o.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(backoff) // the server host may not be listening yet
			backoff = min(backoff*2, 500*time.Millisecond)
			continue
		}
		rec.Status = perftest.StatusFailed
		rec.Error = fmt.Sprintf("%s exited %d: %s", argv[0], exitCode(err), bytes.TrimSpace(stderr.Bytes()))
		return rec
	}
}

// writeResult streams res to w.
func writeResult(w io.Writer, res *Result) error {
	rw := NewResultWriter(w, *res)
	for _, rec := range res.Records {
		_ = rw.Record(rec) // errors stick: Close returns them
	}
	for _, sr := range res.Servers {
		_ = rw.Server(sr)
	}
	return rw.Close()
}
