package collectors_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/internal/testinflux"
)

func numbered(from, n int) []collectors.Point {
	pts := make([]collectors.Point, n)
	for i := range pts {
		pts[i] = collectors.Point{Measurement: "t", Time: time.Unix(1700000000, int64(from+i)*1000),
			Tags: map[string]string{"k": "a"}, Fields: map[string]any{"v": int64(from + i)}}
	}
	return pts
}

// The spool gives every point to a replay exactly once: a failed write
// leaves its batch for the next replay, a reopened spool starts at the
// committed offset, and a torn last line (a crash cut it) is skipped.
func TestSpoolReplaysEachPointOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sp, err := collectors.OpenSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := sp.Append(numbered(i*10, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Pending() != 50 {
		t.Fatalf("pending %d, want 50", sp.Pending())
	}
	if _, err := collectors.OpenSpool(dir); err == nil {
		t.Fatal("a second process opened a spool in use")
	}
	got := map[int64]int{}
	calls := 0
	write := func(_ context.Context, pts []collectors.Point) error {
		calls++
		if calls == 3 {
			return fmt.Errorf("influxdb down")
		}
		for _, p := range pts {
			got[p.Fields["v"].(int64)]++
		}
		return nil
	}
	n, err := sp.Replay(context.Background(), 15, write)
	if err == nil || n != 30 || sp.Pending() != 20 {
		t.Fatalf("first replay: %d points, err %v, pending %d; want 30, an error, 20", n, err, sp.Pending())
	}
	sp.Close()
	// A crash tore the last line of what is left.
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.lp"))
	f, _ := os.OpenFile(segs[len(segs)-1], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("t,k=a v=99")
	f.Close()
	sp, err = collectors.OpenSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if sp.Pending() != 20 {
		t.Fatalf("reopened spool: pending %d, want 20", sp.Pending())
	}
	if n, err := sp.Replay(context.Background(), 15, write); err != nil || n != 20 {
		t.Fatalf("second replay: %d, %v", n, err)
	}
	for v := int64(0); v < 50; v++ {
		if got[v] != 1 {
			t.Errorf("point %d written %d times", v, got[v])
		}
	}
	if sp.Pending() != 0 || sp.Torn() != 1 {
		t.Errorf("pending %d, torn %d; want 0 and 1", sp.Pending(), sp.Torn())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(left) != 0 {
		t.Errorf("replayed segments left: %v", left)
	}
}

// InfluxDB killed, or stopped (SIGSTOP: it keeps its socket and answers
// nothing), while points stream in: Write never waits for it, the points
// go to the spool and are replayed when it is back, and InfluxDB ends up
// holding every point once.
func TestInfluxOutageLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts influxd")
	}
	t.Parallel()
	for _, tc := range testinflux.Outages() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			proc := testinflux.StartProcess(t)
			srv := proc.Database(t)
			const timeout = time.Second
			s, err := collectors.NewInfluxSink(collectors.InfluxConfig{URL: srv.URL, Bucket: srv.Bucket, SpoolDir: t.TempDir(),
				BatchSize: 200, FlushInterval: 20 * time.Millisecond, RetryInterval: 200 * time.Millisecond, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			const perTick, ticks = 20, 300 // 6000 points over about 3 s
			var slowest time.Duration
			for i := 0; i < ticks; i++ {
				switch i {
				case 50:
					tc.Fault(proc)
				case 200:
					tc.Recover(proc)
				}
				began := time.Now()
				if err := s.Write(context.Background(), numbered(i*perTick, perTick)); err != nil {
					t.Fatal(err)
				}
				slowest = max(slowest, time.Since(began))
				time.Sleep(10 * time.Millisecond)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := s.Stats()
			t.Logf("slowest Write %v; %+v", slowest, st)
			if slowest > timeout/2 {
				t.Errorf("a Write took %v: it waited for InfluxDB", slowest)
			}
			if st.Spooled == 0 || st.Replayed != st.Spooled || st.Pending != 0 || st.Lost != 0 || st.Written != perTick*ticks {
				t.Errorf("stats %+v: want all %d written, the spooled ones replayed", st, perTick*ticks)
			}
			if len(st.Outages) == 0 || st.Outages[0].To.IsZero() {
				t.Errorf("outages %+v: want one that ended", st.Outages)
			}
			if tc.Name == "stopped" && st.TimedOut == 0 {
				t.Errorf("a stopped InfluxDB timed out no write: %+v", st)
			}
			if n := srv.Count(t, "t"); n != perTick*ticks {
				t.Errorf("InfluxDB holds %d points, want %d", n, perTick*ticks)
			}
		})
	}
}

// InfluxDB down for good: Close says how many points wait in the spool and
// how to replay them; Replay writes them once it is reachable.
func TestUnreplayedSpoolIsReportedAndReplayable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts influxd")
	}
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	spool := t.TempDir()
	s, err := collectors.NewInfluxSink(collectors.InfluxConfig{URL: dead, Bucket: "b", SpoolDir: spool, CloseTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.Write(context.Background(), numbered(0, 7))
	err = s.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "7 points not written") || !strings.Contains(err.Error(), spool) {
		t.Fatalf("got %v", err)
	}
	srv := testinflux.Start(t)
	st, err := collectors.Replay(context.Background(), collectors.InfluxConfig{URL: srv.URL, Bucket: srv.Bucket, SpoolDir: spool})
	if err != nil || st.Replayed != 7 || st.Pending != 0 {
		t.Fatalf("replay: %+v, %v", st, err)
	}
	if n := srv.Count(t, "t"); n != 7 {
		t.Errorf("InfluxDB holds %d points, want 7", n)
	}
	if st, err := collectors.Replay(context.Background(), collectors.InfluxConfig{URL: srv.URL, Bucket: srv.Bucket, SpoolDir: spool}); err != nil || st.Replayed != 0 {
		t.Errorf("second replay: %+v, %v", st, err)
	}
}

// A batch InfluxDB refuses (a field's type conflicts with what it holds)
// is counted as rejected, not spooled: retrying it would fail forever and
// hold up every point behind it.
func TestRejectedBatchDoesNotHoldUpTheSpool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts influxd")
	}
	t.Parallel()
	srv := testinflux.Start(t)
	s, err := collectors.NewInfluxSink(collectors.InfluxConfig{URL: srv.URL, Bucket: srv.Bucket, SpoolDir: t.TempDir(), BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	bad := numbered(2, 2)
	for i := range bad {
		bad[i].Fields["v"] = "text"
	}
	for _, b := range [][]collectors.Point{numbered(0, 2), bad, numbered(4, 2)} {
		s.Write(context.Background(), b)
		time.Sleep(50 * time.Millisecond)
	}
	err = s.Close(context.Background())
	st := s.Stats()
	if err == nil || !strings.Contains(err.Error(), "rejected 2 points") || st.Rejected != 2 || st.Written != 4 || st.Pending != 0 || st.Spooled != 0 {
		t.Fatalf("stats %+v, err %v", st, err)
	}
	if n := srv.Count(t, "t"); n != 4 {
		t.Errorf("InfluxDB holds %d points, want 4", n)
	}
}
