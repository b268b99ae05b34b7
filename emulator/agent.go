package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// agent emulates `labctl agent run --schedule F --host H --out O` on a host:
// instead of spawning perftest processes, the twin executes the schedule
// (once for all hosts) and this host's flows are reported exactly as the
// real agent reports them, with the client output perftest would print.
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
	if err := fs.Parse(argv[3:]); err != nil {
		return 2
	}
	if *schedPath == "" || *out == "" || *self == "" {
		fmt.Fprintln(s.Stderr, "labctl agent run: --schedule, --host and --out are required")
		return 2
	}
	b, err := os.ReadFile(h.path(*schedPath))
	if err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: read schedule %s: %v\n", *schedPath, err)
		return 1
	}
	var sched perftest.Schedule
	if err := json.Unmarshal(b, &sched); err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: schedule %s: %v\n", *schedPath, err)
		return 1
	}
	res, err := h.runEmulated(ctx, &sched, *self)
	if err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: %v\n", err)
		return 1
	}
	rb, _ := json.MarshalIndent(res, "", "  ")
	dst := h.path(*out)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: %v\n", err)
		return 1
	}
	if err := os.WriteFile(dst, rb, 0o644); err != nil {
		fmt.Fprintf(s.Stderr, "labctl agent: write %s: %v\n", *out, err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "agent %s: schedule %s: %d flows sent, %d served\n", *self, sched.ID, len(res.Records), len(res.Servers))
	return 0
}

func (h *host) runEmulated(ctx context.Context, sched *perftest.Schedule, self string) (*agent.Result, error) {
	// Like the real agent, start nothing before the epoch (wall time); the
	// traffic itself then runs in sim time.
	select {
	case <-time.After(time.Until(sched.Epoch)):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	base, results, err := h.lab.twin.RunSchedule(ctx, sched)
	if err != nil {
		return nil, err
	}
	res := &agent.Result{Host: self, ScheduleID: sched.ID, EpochNs: base.UnixNano()}
	for _, f := range sched.Flows {
		if f.Src != self && f.Dst != self {
			continue
		}
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
			rec.Output = h.clientOutput(f, bw)
		}
		if f.Src == self {
			res.Records = append(res.Records, rec)
		}
		if f.Dst == self && rec.Status == perftest.StatusOK {
			res.Servers = append(res.Servers, agent.ServerRun{FlowID: f.ID, Output: h.serverOutput(f, bw(rec))})
		}
	}
	res.Lateness(agent.DefaultLateTolerance)
	return res, nil
}

func bw(r perftest.FlowRecord) perftest.BWResult {
	if r.Result == nil {
		return perftest.BWResult{}
	}
	return *r.Result
}

func (h *host) clientOutput(f perftest.Flow, res perftest.BWResult) string {
	return h.formatFlow(f, perftest.Client, res)
}

func (h *host) serverOutput(f perftest.Flow, res perftest.BWResult) string {
	return h.formatFlow(f, perftest.Server, res)
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
