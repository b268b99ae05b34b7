package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/perftest"
)

// TestMain puts a fake ib_write_bw (testdata/fakeperf: real processes,
// perftest's real output) first on PATH.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakeperf-")
	if err != nil {
		panic(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "ib_write_bw"), "./testdata/fakeperf").CombinedOutput(); err != nil {
		panic(string(out))
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func flow(id int, src, dst string, port int, after ...int) perftest.Flow {
	return perftest.Flow{ID: id, Src: src, Dst: dst, SrcDev: "mlx5_0", DstDev: "mlx5_0", DstAddr: "127.0.0.1", GIDIdx: 3,
		Tool: "ib_write_bw", Bytes: 4 << 20, MsgSize: 1 << 20, QPs: 1, Port: port, After: after}
}

// runHosts runs one agent per host name concurrently, as on a real lab.
func runHosts(t *testing.T, ctx context.Context, s *perftest.Schedule, hosts ...string) map[string]*Result {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]*Result{}
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Run(ctx, s, Options{Self: h, ConnectRetry: 5 * time.Second})
			if err != nil && ctx.Err() == nil {
				t.Errorf("agent %s: %v", h, err)
			}
			mu.Lock()
			out[h] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func TestIncastThroughRealProcesses(t *testing.T) {
	s := &perftest.Schedule{ID: "t/incast", Epoch: time.Now().Add(200 * time.Millisecond),
		Flows: []perftest.Flow{flow(1, "a", "r", 21001), flow(2, "b", "r", 21002), flow(3, "c", "r", 21003)}}
	res := runHosts(t, context.Background(), s, "a", "b", "c", "r")
	for _, h := range []string{"a", "b", "c"} {
		if len(res[h].Records) != 1 {
			t.Fatalf("%s: %+v", h, res[h])
		}
		rec := res[h].Records[0]
		if rec.Status != perftest.StatusOK || rec.Result == nil || rec.Result.Bytes != 1<<20 || rec.Result.Iterations != 5 /* perftest -n minimum */ {
			t.Errorf("%s: %+v", h, rec)
		}
		if rec.StartNs < s.Epoch.UnixNano() {
			t.Errorf("%s started %v before the epoch", h, time.Duration(s.Epoch.UnixNano()-rec.StartNs))
		}
		if !strings.Contains(rec.Output, "RDMA_Write BW Test") {
			t.Errorf("%s: raw output not kept: %q", h, rec.Output)
		}
	}
	if len(res["r"].Servers) != 3 {
		t.Errorf("receiver ran %d servers, want 3", len(res["r"].Servers))
	}
	for _, sr := range res["r"].Servers {
		if sr.ExitCode != 0 || !strings.Contains(sr.Output, "Waiting for client to connect") {
			t.Errorf("server %d: %+v", sr.FlowID, sr)
		}
	}
}

func TestClientRetriesUntilServerListens(t *testing.T) {
	s := &perftest.Schedule{ID: "t/late", Epoch: time.Now(), Flows: []perftest.Flow{flow(1, "a", "r", 21011)}}
	var recv *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond) // the receiving host's agent comes late
		recv, _ = Run(context.Background(), s, Options{Self: "r"})
	}()
	res, err := Run(context.Background(), s, Options{Self: "a", ConnectRetry: 5 * time.Second})
	<-done
	if err != nil || res.Records[0].Status != perftest.StatusOK {
		t.Fatalf("client did not retry: %v %+v", err, res.Records)
	}
	if len(recv.Servers) != 1 {
		t.Fatal("no server run recorded")
	}
}

func TestDependenciesAndSkips(t *testing.T) {
	// a->b, then b->c after it; c->a (port nobody serves) fails; a->c after that is skipped.
	bad := flow(3, "c", "x", 21099)
	bad.DstAddr = "127.0.0.1"
	s := &perftest.Schedule{ID: "t/deps", Epoch: time.Now(), Flows: []perftest.Flow{
		flow(1, "a", "b", 21021), flow(2, "b", "c", 21022, 1), bad, flow(4, "c", "b", 21024, 3)}}
	ctx := context.Background()
	var wg sync.WaitGroup
	res := map[string]*Result{}
	var mu sync.Mutex
	for _, h := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _ := Run(ctx, s, Options{Self: h, ConnectRetry: 300 * time.Millisecond, ServerGrace: time.Second})
			mu.Lock()
			res[h] = r
			mu.Unlock()
		}()
	}
	// b's server for flow 4 would wait forever once flow 4 is skipped: the
	// grace period ends it.
	doneCh := make(chan struct{})
	go func() { wg.Wait(); close(doneCh) }()
	select {
	case <-doneCh:
	case <-time.After(20 * time.Second):
		t.Fatal("agents did not finish")
	}
	var f1, f2 perftest.FlowRecord
	for _, r := range res["a"].Records {
		if r.FlowID == 1 {
			f1 = r
		}
	}
	var f3, f4 perftest.FlowRecord
	for _, r := range res["c"].Records {
		switch r.FlowID {
		case 3:
			f3 = r
		case 4:
			f4 = r
		}
	}
	for _, r := range res["b"].Records {
		if r.FlowID == 2 {
			f2 = r
		}
	}
	// b sees flow 1 end when its server does (the sender records its own
	// end a moment later); flow 1 moves 5 MiB at the fake's 1 GB/s + 5 ms.
	if f2.Status != perftest.StatusOK || f2.StartNs-f1.StartNs < int64(10*time.Millisecond) {
		t.Errorf("flow 2 must wait for flow 1: started %v after it", time.Duration(f2.StartNs-f1.StartNs))
	}
	var killed bool
	for _, sr := range res["b"].Servers {
		killed = killed || (sr.FlowID == 4 && strings.Contains(sr.Stderr, "no client connected"))
	}
	if !killed {
		t.Errorf("b's server for the skipped flow 4 must be ended and reported: %+v", res["b"].Servers)
	}
	if f3.Status != perftest.StatusFailed || !strings.Contains(f3.Error, "Couldn't connect") {
		t.Errorf("flow 3 to nobody: %+v", f3)
	}
	if f4.Status != perftest.StatusSkipped {
		t.Errorf("flow 4 depends on failed flow 3: %+v", f4)
	}
	if f1.Status != perftest.StatusOK {
		t.Errorf("flow 1: %+v", f1)
	}
}

func TestCancelKillsEveryProcess(t *testing.T) {
	s := &perftest.Schedule{ID: "t/cancel", Epoch: time.Now(), Flows: []perftest.Flow{flow(1, "nobody", "r", 21031), flow(2, "nobody", "r", 21032)}}
	ctx, cancel := context.WithCancel(context.Background())
	pids := make(chan []int, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		pids <- serverPIDs(t)
		cancel()
	}()
	_, err := Run(ctx, s, Options{Self: "r"})
	if err == nil {
		t.Fatal("a cancelled run must say so")
	}
	started := <-pids
	if len(started) != 2 {
		t.Fatalf("expected 2 running servers before cancel, saw %v", started)
	}
	for _, pid := range started {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("server pid %d survived the cancel", pid)
		}
	}
}

// serverPIDs finds this test's fake servers by their command line.
func serverPIDs(t *testing.T) []int {
	out, _ := exec.Command("pgrep", "-f", "ib_write_bw .*-p 2103[12]").Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var p int
		for _, c := range f {
			p = p*10 + int(c-'0')
		}
		pids = append(pids, p)
	}
	return pids
}

// TestLateFlowsAreReported: a schedule asking for more concurrent clients
// than the host may run (MaxConcurrent) starts flows late; the agent says
// how many and by how much, the records carry the real start times, and
// the load they achieved falls short of the load the schedule offered.
func TestLateFlowsAreReported(t *testing.T) {
	const n, gap = 12, time.Millisecond
	mk := func(id string, port int) *perftest.Schedule {
		s := &perftest.Schedule{ID: id, Epoch: time.Now().Add(300 * time.Millisecond)}
		for i := 0; i < n; i++ {
			f := flow(i, "a", "r", port+i)
			f.Bytes = 1 << 20 // the fake takes ~6 ms per flow
			f.Offset = time.Duration(i) * gap
			s.Flows = append(s.Flows, f)
		}
		return s
	}
	run := func(s *perftest.Schedule, maxConc int) *Result {
		var recv *Result
		done := make(chan struct{})
		go func() {
			defer close(done)
			recv, _ = Run(context.Background(), s, Options{Self: "r"})
		}()
		res, err := Run(context.Background(), s, Options{Self: "a", MaxConcurrent: maxConc, LateTolerance: 40 * time.Millisecond})
		<-done
		if err != nil || len(res.Records) != n || len(recv.Servers) != n {
			t.Fatalf("run: %v, %d records, %d servers", err, len(res.Records), len(recv.Servers))
		}
		return res
	}
	window := n * gap
	offered := perftest.OfferedLoad(mk("x", 0).Flows, 1, 100, window)

	free := run(mk("t/free", 21100), 0)
	if free.Late != 0 || free.EpochNs == 0 {
		t.Errorf("unbounded clients: %d late (max lag %v), epoch %d", free.Late, time.Duration(free.MaxLagNs), free.EpochNs)
	}

	s := mk("t/bounded", 21200)
	res := run(s, 1) // one client at a time, each ~6 ms, asked for every 1 ms
	if res.Late == 0 || res.MaxLagNs < int64(40*time.Millisecond) || res.MaxConcurrent != 1 || res.LateToleranceNs != int64(40*time.Millisecond) {
		t.Fatalf("want late flows reported, got late %d max lag %v", res.Late, time.Duration(res.MaxLagNs))
	}
	late := 0
	for _, rec := range res.Records {
		planned := s.Epoch.Add(s.Flows[rec.FlowID].Offset).UnixNano()
		if got := rec.StartNs - planned; got != rec.LagNs || got < 0 {
			t.Errorf("flow %d: lag %v, but started %v after its offset", rec.FlowID, time.Duration(rec.LagNs), time.Duration(got))
		}
		if rec.LagNs > res.LateToleranceNs {
			late++
		}
	}
	if late != res.Late {
		t.Errorf("Late %d, but %d records lag beyond the tolerance", res.Late, late)
	}
	achieved := perftest.AchievedLoad(res.Records, time.Unix(0, res.EpochNs), 1, 100, window)
	if achieved >= offered*0.5 {
		t.Errorf("achieved load %.4f should fall far below the offered %.4f: most flows started after the window", achieved, offered)
	}
}

// runPair runs the receiving agent r with ro and the sending agent a.
func runPair(t *testing.T, s *perftest.Schedule, ro Options) (send, recv *Result) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ro.Self = "r"
		var err error
		if recv, err = Run(context.Background(), s, ro); err != nil {
			t.Errorf("receiver: %v", err)
		}
	}()
	send, err := Run(context.Background(), s, Options{Self: "a", ConnectRetry: 5 * time.Second})
	<-done
	if err != nil {
		t.Fatalf("sender: %v", err)
	}
	for _, rec := range send.Records {
		if rec.Status != perftest.StatusOK {
			t.Errorf("flow %d: %s %s", rec.FlowID, rec.Status, rec.Error)
		}
	}
	return send, recv
}

// TestServersStartShortlyBeforeTheirFlowsBounded: the receiving agent does
// not start a server per flow up front: each starts ServerLead before its
// flow is due, and no more than MaxServers run at once.
func TestServersStartShortlyBeforeTheirFlowsBounded(t *testing.T) {
	const lead = 100 * time.Millisecond
	s := &perftest.Schedule{ID: "t/servers", Epoch: time.Now().Add(200 * time.Millisecond)}
	for i := 0; i < 6; i++ { // six flows 10 ms apart, ~9 ms each
		f := flow(i, "a", "r", 21300+i)
		f.Offset = time.Duration(i) * 10 * time.Millisecond
		s.Flows = append(s.Flows, f)
	}
	late := flow(6, "a", "r", 21306)
	late.Offset = 600 * time.Millisecond
	s.Flows = append(s.Flows, late)
	_, recv := runPair(t, s, Options{MaxServers: 2, ServerLead: lead})
	if len(recv.Servers) != len(s.Flows) {
		t.Fatalf("%d server runs, want %d", len(recv.Servers), len(s.Flows))
	}
	for _, a := range recv.Servers {
		if a.ExitCode != 0 || a.StartNs == 0 || a.EndNs < a.StartNs {
			t.Fatalf("server %d: %+v", a.FlowID, a)
		}
		if due := s.Epoch.Add(s.Flows[a.FlowID].Offset - lead); a.StartNs < due.UnixNano() {
			t.Errorf("server %d started %v before its lead", a.FlowID, due.Sub(time.Unix(0, a.StartNs)))
		}
		running := 0
		for _, b := range recv.Servers {
			if b.StartNs <= a.StartNs && a.StartNs < b.EndNs {
				running++
			}
		}
		if running > 2 {
			t.Errorf("%d servers ran at once when server %d started; MaxServers is 2", running, a.FlowID)
		}
	}
}

// TestFlowsSharingAPortRunInTurn: when a host receives more flows than
// there are ports, flows share ports (the patterns reuse them in turn); the agent starts
// a port's next server only once the previous one has exited.
func TestFlowsSharingAPortRunInTurn(t *testing.T) {
	s := &perftest.Schedule{ID: "t/reuse", Epoch: time.Now().Add(200 * time.Millisecond),
		Flows: []perftest.Flow{flow(0, "a", "r", 21400), flow(1, "a", "r", 21400)}}
	s.Flows[1].Offset = 100 * time.Millisecond
	_, recv := runPair(t, s, Options{})
	if len(recv.Servers) != 2 {
		t.Fatalf("%+v", recv.Servers)
	}
	first, second := recv.Servers[0], recv.Servers[1]
	if first.ExitCode != 0 || second.ExitCode != 0 || second.StartNs < first.EndNs {
		t.Errorf("servers on one port must run in turn: %+v then %+v", first, second)
	}
}
