package collectors_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/internal/testinflux"
)

type memSink struct {
	mu  sync.Mutex
	pts []collectors.Point
}

func (m *memSink) Write(_ context.Context, p []collectors.Point) error {
	m.mu.Lock()
	m.pts = append(m.pts, p...)
	m.mu.Unlock()
	return nil
}
func (m *memSink) Close(context.Context) error { return nil }
func (m *memSink) find(meas string, pred func(collectors.Point) bool) []collectors.Point {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []collectors.Point
	for _, p := range m.pts {
		if p.Measurement == meas && pred(p) {
			out = append(out, p)
		}
	}
	return out
}

func serve(t *testing.T, addr string) (*gnmitarget.Target, string) {
	t.Helper()
	tgt, err := gnmitarget.New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var lis net.Listener
	for i := 0; i < 50; i++ { // a restarted target reuses its port
		if lis, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	go tgt.Serve(context.Background(), lis)
	return tgt, lis.Addr().String()
}

func counters(tx uint64, pfc uint64, depth uint64) map[string]*fabric.PortCounters {
	pc := &fabric.PortCounters{TxBytes: tx, RxBytes: tx / 2, TxPkts: tx / 4178}
	pc.PFCTx[3] = pfc
	pc.PauseRxNs[3] = pfc * 1500 // 1.5 µs paused per frame: whole µs on the wire
	pc.Queues[3] = fabric.QueueCounters{DepthBytes: depth, WatermarkBytes: depth, TxBytes: tx, TxPkts: tx / 4178}
	return map[string]*fabric.PortCounters{"1/0": pc}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestCollectDecodesStreamsAndRecordsGaps(t *testing.T) {
	tgt, addr := serve(t, "127.0.0.1:0")
	sink := &memSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- collectors.Collect(ctx, collectors.GNMITarget{Device: "leaf1", Addr: addr},
			collectors.GNMIOptions{Interval: 100 * time.Microsecond, Lab: "lab", Run: "r1", Reconnect: 20 * time.Millisecond, Security: collectors.GNMISecurity{Plaintext: true}}, sink)
	}()
	waitFor(t, "the subscription", func() bool { return tgt.SampleInterval() == 100*time.Microsecond })
	t0 := time.Unix(1700000000, 0)
	port := func(p collectors.Point) bool {
		return p.Tags["device"] == "leaf1" && p.Tags["port"] == "1/0" && p.Tags["run"] == "r1"
	}
	// Both subscriptions (OpenConfig and COUNTERS_DB) sync the first sample.
	tgt.Publish(t0, counters(1000, 0, 0))
	waitFor(t, "the first sample on both streams", func() bool {
		return len(sink.find("port", func(p collectors.Point) bool { return port(p) && p.Fields["tx_bytes"] != nil })) >= 1 &&
			len(sink.find("queue", func(p collectors.Point) bool { return port(p) && p.Fields["depth_bytes"] != nil })) >= 1
	})
	tgt.Publish(t0.Add(100*time.Microsecond), counters(500000, 7, 524288))
	waitFor(t, "port and queue points", func() bool {
		return len(sink.find("port", func(p collectors.Point) bool { return port(p) && p.Fields["tx_bytes"] != nil })) >= 2 &&
			len(sink.find("queue", func(p collectors.Point) bool { return port(p) && p.Fields["depth_bytes"] != nil })) >= 2
	})
	oc := sink.find("port", func(p collectors.Point) bool { return port(p) && p.Fields["tx_bytes"] != nil })
	if oc[0].Fields["tx_bytes"] != uint64(1000) || oc[1].Fields["tx_bytes"] != uint64(500000) || !oc[1].Time.Equal(t0.Add(100*time.Microsecond)) {
		t.Errorf("OpenConfig counters: %+v", oc)
	}
	pfc := sink.find("port", func(p collectors.Point) bool { return port(p) && p.Fields["pfc3_tx"] == uint64(7) })
	if len(pfc) != 1 || pfc[0].Fields["pfc3_rx_pause_duration_us"] != uint64(10) {
		t.Errorf("PFC frames and pause duration (10 µs of 10.5) from COUNTERS_DB: %+v", pfc)
	}
	q := sink.find("queue", func(p collectors.Point) bool {
		return p.Tags["queue"] == "3" && p.Fields["depth_bytes"] == uint64(524288)
	})
	if len(q) != 1 {
		t.Errorf("queue depth from COUNTERS_DB: %+v", q)
	}

	// An idle snapshot: every point decoded from it, in all four tables,
	// is tagged idle; none before it is.
	idleAt := t0.Add(200 * time.Microsecond)
	tgt.PublishIdle(idleAt, counters(500000, 7, 0))
	atIdle := func(p collectors.Point) bool { return port(p) && p.Time.Equal(idleAt) }
	waitFor(t, "the idle snapshot", func() bool {
		return len(sink.find("port", atIdle))+len(sink.find("queue", atIdle)) == 4
	})
	for _, meas := range []string{"port", "queue"} {
		for _, p := range sink.find(meas, port) {
			if p.Idle() != p.Time.Equal(idleAt) || (p.Idle() && p.Tags[collectors.TagIdle] != "true") {
				t.Errorf("%s at %v: tags %v", meas, p.Time, p.Tags)
			}
		}
	}

	// The switch's gNMI server restarts: the collector is back within a
	// second of it, records a gap per stream from the last sample before
	// to the first after, and takes no sample twice (the target's cache
	// resends what it had).
	if err := tgt.Restart(context.Background(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	after := t0.Add(time.Second)
	tgt.Publish(after, counters(900000, 9, 0))
	waitFor(t, "points after the restart", func() bool {
		return len(sink.find("port", func(p collectors.Point) bool { return p.Fields["tx_bytes"] == uint64(900000) })) > 0 &&
			len(sink.find("collector_gap", func(collectors.Point) bool { return true })) == 2
	})
	if d := time.Since(back); d > time.Second {
		t.Errorf("samples came %v after the target was back, want within 1s", d)
	} else {
		t.Logf("samples again %v after the target was back", d)
	}
	for _, p := range sink.find("collector_gap", func(collectors.Point) bool { return true }) {
		g := collectors.GapOf(p)
		if g.Device != "leaf1" || !g.Since.Equal(idleAt) || !g.Until.Equal(after) || g.BrokeAt.IsZero() ||
			g.ResumedAt.Before(back) || g.Interval != 100*time.Microsecond || g.Path == "" || g.Missed() != 9997 {
			t.Errorf("gap %+v (missed %d)", g, g.Missed())
		}
		if !strings.Contains(g.String(), "device leaf1") || !strings.Contains(g.String(), "up to 9997 samples missed") {
			t.Errorf("warning %q", g)
		}
	}
	seen := map[string]bool{}
	for _, meas := range []string{"port", "queue"} {
		for _, p := range sink.find(meas, port) {
			k := fmt.Sprint(meas, p.Time.UnixNano(), p.Fields)
			if seen[k] {
				t.Errorf("%s sample at %v twice", meas, p.Time)
			}
			seen[k] = true
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Collect returned %v after cancel", err)
	}
}

func TestInfluxSinkWritesAndQueries(t *testing.T) {
	srv := testinflux.Start(t)
	s, err := collectors.NewInfluxSink(collectors.InfluxConfig{URL: srv.URL, Bucket: srv.Bucket, BatchSize: 3, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	var pts []collectors.Point
	for i := 0; i < 10; i++ {
		pts = append(pts, collectors.Point{Measurement: "port", Time: now.Add(time.Duration(i) * time.Millisecond),
			Tags: map[string]string{"device": "leaf1", "port": "1/0", "run": "r"}, Fields: map[string]any{"tx_bytes": uint64(i * 100)}})
	}
	if err := s.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Written != 10 || st.Spooled != 0 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
	rows := srv.Flux(t, fmt.Sprintf(`from(bucket:%q) |> range(start: -1h, stop: 1h) |> filter(fn: (r) => r._measurement == "port" and r._field == "tx_bytes") |> sum()`, srv.Bucket))
	if len(rows) != 1 || rows[0]["_value"] != int64(4500) && rows[0]["_value"] != uint64(4500) {
		t.Fatalf("flux sum: %v", rows)
	}
}

func TestArchiveSink(t *testing.T) {
	dir := t.TempDir()
	a, _ := collectors.NewArchiveSink(dir)
	a.Write(context.Background(), []collectors.Point{
		{Measurement: "port", Time: time.Unix(0, 5), Tags: map[string]string{"device": "d"}, Fields: map[string]any{"tx_bytes": uint64(1)}},
		{Measurement: "queue", Time: time.Unix(0, 6), Tags: map[string]string{"device": "d"}, Fields: map[string]any{"depth_bytes": uint64(2)}},
	})
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"port", "queue"} {
		b, err := os.ReadFile(filepath.Join(dir, m+".lp"))
		if err != nil || !strings.HasPrefix(string(b), m+",device=d ") {
			t.Errorf("%s.lp: %q %v", m, b, err)
		}
	}
}
