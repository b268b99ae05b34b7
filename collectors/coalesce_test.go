package collectors_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/openconfig/gnmi/cache"
	pb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/subscribe"
	"google.golang.org/grpc"

	"github.com/labctl/labctl/collectors"
)

// A gNMI target coalesces updates of a path the client has not read yet
// and sends the newest with Update.Duplicates set. openconfig/gnmi's own
// subscribe server, held back before its first send, coalesces the
// second and third sample of a port: the collector must record the loss
// as a collector_gap from the sample before to the one that came.
func TestCoalescedSamplesLeaveAGap(t *testing.T) {
	entered, gate := make(chan struct{}, 8), make(chan struct{})
	c, sink := countersDBTarget(t, subscribe.WithFlowControlTest(func() {
		entered <- struct{}{}
		<-gate
	}))

	t0 := time.Unix(1700000000, 0).UnixNano()
	publish := func(i int64) {
		if err := c.GnmiUpdate(&pb.Notification{Timestamp: t0 + i*100_000, Atomic: true,
			Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "1/0"}}},
			Update: []*pb.Update{{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "SAI_PORT_STAT_PFC_3_TX_PKTS"}}},
				Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: strconv.FormatInt(i, 10)}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	publish(1)
	select {
	case <-entered: // sample 1 is on its way and held
	case <-time.After(5 * time.Second):
		t.Fatal("the target never sent the first sample")
	}
	publish(2)
	publish(3) // coalesced with 2, still queued
	close(gate)
	waitFor(t, "the gap", func() bool { return len(sink.find("collector_gap", func(collectors.Point) bool { return true })) == 1 })
	gap := sink.find("collector_gap", func(collectors.Point) bool { return true })[0]
	if gap.Fields["since_ns"] != t0+100_000 || gap.Fields["until_ns"] != t0+300_000 || gap.Fields["duplicates"] != uint64(1) ||
		gap.Tags["device"] != "leaf1" || gap.Tags["target"] != "COUNTERS_DB" || gap.Fields[collectors.GapPath] != "COUNTERS_DB:/COUNTERS/1/0" {
		t.Errorf("gap %+v", gap)
	}
	got := sink.find("port", func(p collectors.Point) bool { return p.Fields["pfc3_tx"] != nil })
	if len(got) != 2 || got[0].Fields["pfc3_tx"] != uint64(1) || got[1].Fields["pfc3_tx"] != uint64(3) {
		t.Errorf("samples %+v, want 1 and 3", got)
	}
}

// countersDBTarget serves a COUNTERS_DB target from openconfig/gnmi's
// cache and subscribe server on loopback, with a collector subscribed to
// it whose points go to the sink returned; the collector and the server
// stop with the test.
func countersDBTarget(t *testing.T, opts ...subscribe.Option) (*cache.Cache, *memSink) {
	c, sink, _ := countersDBTargetStop(t, opts...)
	return c, sink
}

// countersDBTargetStop is countersDBTarget with a stop that ends the
// collection and returns once the collector has.
func countersDBTargetStop(t *testing.T, opts ...subscribe.Option) (*cache.Cache, *memSink, func()) {
	t.Helper()
	c := cache.New([]string{"COUNTERS_DB"}, cache.DisableEventDrivenEmulation())
	srv, err := subscribe.NewServer(c, append([]subscribe.Option{subscribe.WithStats()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c.SetClient(srv.Update)
	c.GetTarget("COUNTERS_DB").Sync()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	pb.RegisterGNMIServer(g, srv)
	go g.Serve(lis)
	t.Cleanup(g.Stop)

	sink := &memSink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stop := func() { cancel(); <-done }
	t.Cleanup(stop) // before g.Stop: cleanups run last first
	go func() {
		defer close(done)
		collectors.Collect(ctx, collectors.GNMITarget{Device: "leaf1", Addr: lis.Addr().String()},
			collectors.GNMIOptions{Interval: 100 * time.Microsecond, Paths: []string{"COUNTERS_DB:/COUNTERS/*"}, Security: collectors.GNMISecurity{Plaintext: true}}, sink)
	}()
	waitFor(t, "the subscription", func() bool { return srv.TargetStats()["COUNTERS_DB"].ActiveSubscriptionCount == 1 })
	time.Sleep(100 * time.Millisecond) // its queries are registered just after it is counted
	return c, sink, stop
}
