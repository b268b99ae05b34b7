package emulator

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// agent runs `labctl-agent run --schedule F --host H --out O` on a host
// with the real agent's own command handling (agent.Main: flags, reading
// this host's part of the schedule, writing the result) up to where the
// flows run: instead of spawning perftest processes, the host hands the
// flows it sends to the twin, which simulates the point once when every
// host's flows are in, and reports its flows exactly as the real agent
// does, with the output perftest would print. The binary must be where
// the command names it (uploaded like a real one); its content is not run.
func (h *host) agent(ctx context.Context, argv []string, s *sshd.Session) int {
	if _, err := os.Stat(h.path(argv[0])); err != nil {
		fmt.Fprintf(s.Stderr, "sh: 1: %s: not found\n", argv[0])
		return 127
	}
	if len(argv) == 2 && argv[1] == "version" {
		fmt.Fprintln(s.Stdout, "labctl-agent (emulated host)")
		return 0
	}
	exe := h.path(argv[0]) // what a host would exec: verified as /proc/self/exe would be
	return agent.Main(ctx, argv[1:], agent.Env{Stdout: s.Stdout, Stderr: s.Stderr, File: h.path, Execute: h.executeOnTwin,
		Executable: exe, BinaryDir: filepath.Dir(exe), Sum: h.lab.sums.of, Compressors: &h.lab.gzips})
}

// executeOnTwin is agent.Env.Execute on an emulated host.
func (h *host) executeOnTwin(ctx context.Context, part *perftest.Schedule, o agent.Options, w io.Writer) error {
	// Like the real agent, start nothing before the epoch (wall time); the
	// traffic itself then runs in sim time.
	select {
	case <-time.After(time.Until(part.Epoch)):
	case <-ctx.Done():
		return ctx.Err()
	}
	base, results, err := h.lab.twin.SubmitFlows(ctx, part)
	if err != nil {
		return err
	}
	// The twin starts every flow on time; the bound on clients is taken
	// and recorded, as the real agent does, and has nothing to slow down.
	head := agent.Result{Host: o.Self, ScheduleID: part.ID, EpochNs: base.UnixNano(),
		LateToleranceNs: agent.DefaultLateTolerance.Nanoseconds(), MaxConcurrent: o.MaxConcurrent}
	if err := h.lab.writers.acquire(ctx); err != nil {
		return err
	}
	defer h.lab.writers.release()
	return h.writeResult(w, head, part, base, results)
}

// writerSlots bounds the emulated hosts writing their results at once.
// Writing is CPU work (perftest's output for every flow, JSON, gzip) on
// this machine's few cores, so more at once gains nothing, and at 1,024
// hosts every agent wrote at once after the simulation, each holding a
// gzip compressor (~1.2 MB) and its buffers: over a gigabyte of heap.
type writerSlots struct {
	once sync.Once
	ch   chan struct{}
}

func (w *writerSlots) acquire(ctx context.Context) error {
	w.once.Do(func() { w.ch = make(chan struct{}, 2*runtime.GOMAXPROCS(0)) })
	select {
	case w.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *writerSlots) release() { <-w.ch }

// gzipPool lends the hosts' agents gzip writers for their results
// (agent.Compressors): writing is bounded by writerSlots, so a few
// compressors serve every host instead of one new each. (A writer is
// closed and given back just after its host's slot is freed, so a few
// more may exist at once than there are slots.) They are klauspost's:
// the same gzip format as the agent binary's standard library writer at
// over twice its speed on perftest output at level 1
// (BenchmarkResultGzip), and a point's results are hundreds of megabytes
// of it.
type gzipPool struct{ p sync.Pool }

func (g *gzipPool) Get(w io.Writer) io.WriteCloser {
	if zw, ok := g.p.Get().(*gzip.Writer); ok {
		zw.Reset(w)
		return zw
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // the level is valid; the agent's own
	return zw
}

func (g *gzipPool) Put(zw io.WriteCloser) { g.p.Put(zw) }

// writeResult streams this host's result to w: a record with the client's
// output for every flow it sends, then a server run with the server's
// output for every flow it received that completed.
func (h *host) writeResult(w io.Writer, head agent.Result, part *perftest.Schedule, base time.Time, results map[int]fabric.Result) error {
	rw := agent.NewResultWriter(w, head)
	var f flowFormatter
	for _, fl := range part.Flows {
		if fl.Src == head.Host {
			rec := record(fl, results, base)
			var out []byte
			if rec.Result != nil {
				out = f.format(h.lab, fl, perftest.Client, *rec.Result)
			}
			_ = rw.RecordOutput(rec, out) // errors stick: Close returns them
		}
	}
	for _, fl := range part.Flows {
		if fl.Dst == head.Host {
			if rec := record(fl, results, base); rec.Result != nil {
				_ = rw.ServerOutput(agent.ServerRun{FlowID: fl.ID, StartNs: rec.StartNs, EndNs: rec.EndNs},
					f.format(h.lab, fl, perftest.Server, *rec.Result))
			}
		}
	}
	return rw.Close()
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

// flowFormatter renders the output perftest prints for flows, one buffer
// for all of a host's (a point at 1,024 hosts renders 300,000 of them):
// format's result is valid until its next call.
type flowFormatter struct {
	buf []byte
}

func (ff *flowFormatter) format(lab *Lab, f perftest.Flow, role perftest.Role, res perftest.BWResult) []byte {
	src, dst := mustRNIC(lab, f.Src), mustRNIC(lab, f.Dst)
	inv := perftest.Invocation{Tool: f.Tool, QPs: max(f.QPs, 1), Port: f.Port}
	sess := perftest.Session{Tool: f.Tool, Role: role, QPs: max(f.QPs, 1), MTU: 4096, TxDepth: 128, Result: res, Gbits: true}
	if role == perftest.Client {
		sess.Device, sess.GIDIndex = src.Device, src.GIDIndex
		sess.Local, sess.Remote = qpInfos(f.Src, src, inv), qpInfos(f.Dst, dst, inv)
	} else {
		sess.Device, sess.GIDIndex = dst.Device, dst.GIDIndex
		sess.Local, sess.Remote = qpInfos(f.Dst, dst, inv), qpInfos(f.Src, src, inv)
	}
	ff.buf, _ = perftest.AppendBW(ff.buf[:0], sess) // an unknown tool prints nothing
	return ff.buf
}
