package emulator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// agent emulates `labctl agent run --schedule F --host H --out O` on a host:
// instead of spawning perftest processes, the twin executes the schedule
// (once for all hosts) and this host's flows are reported exactly as the
// real agent reports them, with the output perftest would print. The
// hosts of a point share one parsed schedule, and each streams its result
// to O a flow at a time, rendering only the outputs it keeps (clients of
// the flows it sends, servers of those it receives).
func (h *host) agent(ctx context.Context, argv []string, s *sshd.Session) int {
	if len(argv) < 3 || argv[1] != "agent" || argv[2] != "run" {
		if len(argv) >= 2 && argv[1] == "version" {
			fmt.Fprintln(s.Stdout, "labctl (emulated host)")
			return 0
		}
		fmt.Fprintln(s.Stderr, "labctl: the emulated host runs only `labctl agent run`")
		return 2
	}
	fs := flag.NewFlagSet("agent run", flag.ContinueOnError)
	fs.SetOutput(s.Stderr)
	schedPath := fs.String("schedule", "", "")
	self := fs.String("host", "", "")
	out := fs.String("out", "", "")
	// The twin starts every flow on time; the bound on clients is taken
	// and recorded, as the real agent does, and has nothing to slow down.
	maxConc := fs.Int("max-concurrent", 0, "")
	if err := fs.Parse(argv[3:]); err != nil {
		return 2
	}
	if *schedPath == "" || *out == "" || *self == "" {
		fmt.Fprintln(s.Stderr, "labctl agent run: --schedule, --host and --out are required")
		return 2
	}
	sched, release, err := h.loadSchedule(h.path(*schedPath))
	if err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: schedule %s: %v\n", *schedPath, err)
		return 1
	}
	defer release()
	base, results, err := h.runEmulated(ctx, sched)
	if err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: %v\n", err)
		return 1
	}
	head := agent.Result{Host: *self, ScheduleID: sched.ID, EpochNs: base.UnixNano(),
		LateToleranceNs: agent.DefaultLateTolerance.Nanoseconds(), MaxConcurrent: *maxConc}
	sent, served, err := h.writeResult(h.path(*out), head, sched, base, results)
	if err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: write %s: %v\n", *out, err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "agent %s: schedule %s: %d flows sent, %d served\n", *self, sched.ID, sent, served)
	return 0
}

// loadSchedule returns the schedule in file, shared with every other
// agent of the lab that reads the same schedule (by its id, the first
// field the runner writes); release drops this agent's hold on it.
func (h *host) loadSchedule(file string) (*perftest.Schedule, func(), error) {
	decode := func() (*perftest.Schedule, error) {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var s perftest.Schedule
		if err := json.NewDecoder(bufio.NewReader(f)).Decode(&s); err != nil {
			return nil, err
		}
		return &s, nil
	}
	id, err := leadingID(file)
	if err != nil {
		return nil, nil, err
	}
	if id == "" { // no id up front: this agent's own copy
		s, err := decode()
		return s, func() {}, err
	}
	return h.lab.twin.schedule(id, decode)
}

// leadingID is the value of a JSON document's first key when that key is
// "id", read without decoding the rest; "" otherwise.
func leadingID(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object (%v)", err)
	}
	if tok, err := dec.Token(); err != nil || tok != "id" {
		return "", nil
	}
	var id string
	if err := dec.Decode(&id); err != nil {
		return "", err
	}
	return id, nil
}

func (h *host) runEmulated(ctx context.Context, sched *perftest.Schedule) (time.Time, map[int]fabric.Result, error) {
	// Like the real agent, start nothing before the epoch (wall time); the
	// traffic itself then runs in sim time.
	select {
	case <-time.After(time.Until(sched.Epoch)):
	case <-ctx.Done():
		return time.Time{}, nil, ctx.Err()
	}
	return h.lab.twin.RunSchedule(ctx, sched)
}

// writeResult streams this host's result to file: a record with the
// client's output for every flow it sends, then a server run with the
// server's output for every flow it received that completed.
func (h *host) writeResult(file string, head agent.Result, sched *perftest.Schedule, base time.Time,
	results map[int]fabric.Result) (sent, served int, err error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return 0, 0, err
	}
	f, err := os.Create(file)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	w := agent.NewResultWriter(f, head)
	for _, fl := range sched.Flows {
		if fl.Src == head.Host {
			rec := record(fl, results, base)
			if rec.Result != nil {
				rec.Output = h.formatFlow(fl, perftest.Client, *rec.Result)
			}
			_ = w.Record(rec) // errors stick: Close returns them
			sent++
		}
	}
	for _, fl := range sched.Flows {
		if fl.Dst == head.Host {
			if rec := record(fl, results, base); rec.Result != nil {
				_ = w.Server(agent.ServerRun{FlowID: fl.ID, Output: h.formatFlow(fl, perftest.Server, *rec.Result),
					StartNs: rec.StartNs, EndNs: rec.EndNs})
				served++
			}
		}
	}
	if err := w.Close(); err != nil {
		return sent, served, err
	}
	return sent, served, f.Close()
}

// record is a flow's record from the twin's result: times on the wall
// clock from base, and the bandwidth row perftest would print (nil when
// the flow failed).
func record(f perftest.Flow, results map[int]fabric.Result, base time.Time) perftest.FlowRecord {
	fr, ok := results[f.ID]
	rec := perftest.FlowRecord{FlowID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, Tool: f.Tool,
		Group: f.Group, Step: f.Step, Status: perftest.StatusOK}
	switch {
	case !ok:
		rec.Status, rec.Error = perftest.StatusFailed, "fabric twin returned no result"
	case fr.Err != "":
		rec.Status, rec.Error = perftest.StatusFailed, fr.Err
	default:
		rec.StartNs = base.Add(time.Duration(fr.Start)).UnixNano()
		rec.EndNs = base.Add(time.Duration(fr.End)).UnixNano()
		if len(f.After) == 0 {
			rec.LagNs = max(fr.Start-int64(f.Offset), 0)
		}
		iters := f.Iterations() * int64(max(f.QPs, 1))
		bw := perftest.NewResult(f.MsgSize, iters, float64(fr.End-fr.Start)/1e9, true)
		rec.Result = &bw
	}
	return rec
}

func (h *host) formatFlow(f perftest.Flow, role perftest.Role, res perftest.BWResult) string {
	src, dst := mustRNIC(h.lab, f.Src), mustRNIC(h.lab, f.Dst)
	inv := perftest.Invocation{Tool: f.Tool, QPs: max(f.QPs, 1), Port: f.Port}
	sess := perftest.Session{Tool: f.Tool, Role: role, QPs: max(f.QPs, 1), MTU: 4096, TxDepth: 128, Result: res, Gbits: true}
	if role == perftest.Client {
		sess.Device, sess.GIDIndex = src.Device, src.GIDIndex
		sess.Local, sess.Remote = qpInfos(f.Src, src, inv), qpInfos(f.Dst, dst, inv)
	} else {
		sess.Device, sess.GIDIndex = dst.Device, dst.GIDIndex
		sess.Local, sess.Remote = qpInfos(f.Dst, dst, inv), qpInfos(f.Src, src, inv)
	}
	var b bytes.Buffer
	_ = perftest.FormatBW(&b, sess)
	return b.String()
}
