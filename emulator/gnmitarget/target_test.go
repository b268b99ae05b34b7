package gnmitarget

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

func serve(t *testing.T) (*Target, pb.GNMIClient) {
	t.Helper()
	tgt, err := New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go tgt.Serve(ctx, lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return tgt, pb.NewGNMIClient(conn)
}

// once is what a ONCE subscription to path of target gets before its
// sync response.
func once(t *testing.T, c pb.GNMIClient, target string, path *pb.Path) []*pb.Notification {
	t.Helper()
	all, err := onceErr(c, target, path)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func onceErr(c pb.GNMIClient, target string, path *pb.Path) ([]*pb.Notification, error) {
	sc, err := c.Subscribe(context.Background())
	if err != nil {
		return nil, err
	}
	sc.Send(&pb.SubscribeRequest{Request: &pb.SubscribeRequest_Subscribe{Subscribe: &pb.SubscriptionList{
		Prefix: &pb.Path{Target: target}, Mode: pb.SubscriptionList_ONCE, Subscription: []*pb.Subscription{{Path: path}}}}})
	var all []*pb.Notification
	for {
		r, err := sc.Recv()
		if err != nil {
			return nil, err
		}
		if r.GetSyncResponse() {
			return all, nil
		}
		all = append(all, r.GetUpdate())
	}
}

func TestOnceReturnsPublishedCountersThenSync(t *testing.T) {
	tgt, c := serve(t)
	pc := &fabric.PortCounters{TxBytes: 4096, RxBytes: 8192}
	pc.PFCRx[3] = 5
	pc.PauseRxNs[3] = 7_900 // reported in whole microseconds
	ts := time.Unix(1700000000, 42)
	tgt.Publish(ts, map[string]*fabric.PortCounters{"1/0": pc})
	all := once(t, c, CountersDB, &pb.Path{Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "*"}}})
	found, duration := false, false
	for _, n := range all {
		if n.GetTimestamp() != ts.UnixNano() {
			t.Errorf("sample at %d, published at %d", n.GetTimestamp(), ts.UnixNano())
		}
		if len(n.GetUpdate()) != 1 || len(n.GetUpdate()[0].GetPath().GetElem()) != 0 {
			t.Errorf("a table key goes whole, as one update under its prefix: %v", n)
			continue
		}
		var table map[string]string
		if err := json.Unmarshal(n.GetUpdate()[0].GetVal().GetJsonIetfVal(), &table); err != nil {
			t.Errorf("table %v: %v", n.GetPrefix(), err)
		}
		if _, ok := table["SAI_PORT_STAT_PFC_3_RX_PKTS"]; ok {
			found = table["SAI_PORT_STAT_PFC_3_RX_PKTS"] == "5" && len(table) == 24
			duration = table["SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US"] == "7"
		}
	}
	if len(all) != 2 || !found || !duration {
		t.Errorf("want the port and queue-3 tables with PFC priority 3 rx frames and pause time as sonic-gnmi serves them (JSON_IETF objects, strings \"5\" and \"7\" us): %v", all)
	}
}

func TestSampleIntervalFollowsSubscriptions(t *testing.T) {
	tgt, c := serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	sc, _ := c.Subscribe(ctx)
	sc.Send(&pb.SubscribeRequest{Request: &pb.SubscribeRequest_Subscribe{Subscribe: &pb.SubscriptionList{
		Prefix: &pb.Path{Target: "leaf1"}, Mode: pb.SubscriptionList_STREAM,
		Subscription: []*pb.Subscription{{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "interfaces"}}}, Mode: pb.SubscriptionMode_SAMPLE, SampleInterval: uint64(250 * time.Microsecond)}}}}})
	deadline := time.Now().Add(5 * time.Second)
	for tgt.SampleInterval() != 250*time.Microsecond && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if tgt.SampleInterval() != 250*time.Microsecond {
		t.Fatalf("SampleInterval %v", tgt.SampleInterval())
	}
	cancel()
	for tgt.SampleInterval() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if tgt.SampleInterval() != 0 {
		t.Error("a closed subscription must stop counting")
	}
	caps, err := c.Capabilities(context.Background(), &pb.CapabilityRequest{})
	if err != nil || len(caps.GetSupportedModels()) == 0 {
		t.Errorf("capabilities: %v %v", caps, err)
	}
}

// streamCountersDB subscribes to the COUNTERS_DB tables as the collector
// does (STREAM, SAMPLE every 100us) and reads the sync response of the
// empty cache.
func streamCountersDB(ctx context.Context, t *testing.T, c pb.GNMIClient) pb.GNMI_SubscribeClient {
	t.Helper()
	sc, err := c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc.Send(&pb.SubscribeRequest{Request: &pb.SubscribeRequest_Subscribe{Subscribe: &pb.SubscriptionList{
		Prefix: &pb.Path{Target: CountersDB}, Mode: pb.SubscriptionList_STREAM,
		Subscription: []*pb.Subscription{{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "*"}}},
			Mode: pb.SubscriptionMode_SAMPLE, SampleInterval: uint64(100 * time.Microsecond)}}}}})
	if r, err := sc.Recv(); err != nil || !r.GetSyncResponse() {
		t.Fatalf("want the sync response of an empty cache first: %v %v", r, err)
	}
	return sc
}

// The twin publishes snapshots much faster than wall-clock sampling
// would. A subscriber that reads slowly must still get every one of them
// (the target waits for it) rather than the newest with Duplicates set.
func TestPublishWaitsForSlowSubscribers(t *testing.T) {
	tgt, c := serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := streamCountersDB(ctx, t, c)
	const n = 200
	t0 := time.Unix(1700000000, 0)
	go func() {
		for i := 1; i <= n; i++ { // as fast as the twin simulates
			tgt.Publish(t0.Add(time.Duration(i)*100*time.Microsecond), map[string]*fabric.PortCounters{"1/0": {PFCTx: [8]uint64{3: uint64(i)}}})
		}
	}()
	seen, dups := map[int64]bool{}, uint32(0)
	for len(seen) < n {
		r, err := sc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Microsecond) // a slow collector
		u := r.GetUpdate()
		if u.GetPrefix().GetElem()[1].GetName() != "1/0" {
			continue
		}
		seen[u.GetTimestamp()] = true
		dups += u.GetUpdate()[0].GetDuplicates()
		if u.GetTimestamp() == t0.Add(n*100*time.Microsecond).UnixNano() {
			break
		}
	}
	if len(seen) != n || dups != 0 {
		t.Errorf("got %d of %d samples, %d coalesced", len(seen), n, dups)
	}
}

// A subscriber that stops reading holds the publisher back once, for
// maxWait, and is then left behind until it catches up: one stuck client
// cannot stall the lab.
func TestStuckSubscriberIsLeftBehind(t *testing.T) {
	tgt, err := New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	tgt.maxWait = 50 * time.Millisecond
	f, remove := tgt.addFlow(&pb.SubscriptionList{Prefix: &pb.Path{Target: CountersDB},
		Subscription: []*pb.Subscription{{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "*"}}}}}})
	defer remove()
	t0 := time.Unix(1700000000, 0)
	publish := func(i int) time.Duration {
		start := time.Now()
		tgt.Publish(t0.Add(time.Duration(i)*time.Millisecond), map[string]*fabric.PortCounters{"1/0": {}})
		return time.Since(start)
	}
	if d := publish(1); d > 40*time.Millisecond {
		t.Errorf("first publish waited %v with nothing pending", d)
	}
	if d := publish(2); d < 50*time.Millisecond {
		t.Errorf("second publish waited only %v for the subscriber", d)
	}
	if d := publish(3); d > 40*time.Millisecond {
		t.Errorf("a lagging subscriber still holds publishing back (%v)", d)
	}
	tgt.flowMu.Lock()
	lagging, pending := f.lagging, len(f.pending)
	tgt.flowMu.Unlock()
	if !lagging || pending == 0 {
		t.Errorf("lagging %v with %d pending", lagging, pending)
	}
}

// An idle snapshot's notifications carry the idle mark; a traffic
// snapshot's do not.
func TestIdleSnapshotsAreMarked(t *testing.T) {
	tgt, c := serve(t)
	t0 := time.Unix(1700000000, 0)
	tgt.PublishIdle(t0, map[string]*fabric.PortCounters{"1/0": {}})
	tgt.Publish(t0.Add(time.Millisecond), map[string]*fabric.PortCounters{"2/0": {}})
	marked := map[string]bool{}
	for _, n := range once(t, c, "leaf1", &pb.Path{Elem: []*pb.PathElem{{Name: "interfaces"}}}) {
		port := n.GetPrefix().GetElem()[1].GetKey()["name"]
		for _, u := range n.GetUpdate() {
			if u.GetPath().GetElem()[0].GetName() == collectors.IdleLeaf && u.GetVal().GetBoolVal() {
				marked[port] = true
			}
		}
		if _, ok := marked[port]; !ok {
			marked[port] = false
		}
	}
	if len(marked) != 2 || !marked["1/0"] || marked["2/0"] {
		t.Errorf("idle marks by port %v, want 1/0 (idle) only", marked)
	}
}

// A subscriber that stops reading is left behind (maxWait) and the
// subscribe server coalesces its samples: the target counts every
// coalesced sample, and the subscriber is told of the same number through
// Update.Duplicates once it reads again.
func TestCoalescingIsCounted(t *testing.T) {
	tgt, c := serve(t)
	tgt.maxWait = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := streamCountersDB(ctx, t, c)
	// Enough ports that a few snapshots fill gRPC's windows while the
	// subscriber does not read.
	ports := map[string]*fabric.PortCounters{}
	for i := 0; i < 256; i++ {
		ports[fmt.Sprintf("%d/0", i)] = &fabric.PortCounters{}
	}
	const n = 40
	t0 := time.Unix(1700000000, 0)
	for i := 1; i <= n; i++ {
		tgt.Publish(t0.Add(time.Duration(i)*100*time.Microsecond), ports)
	}
	last := t0.Add(n * 100 * time.Microsecond).UnixNano()
	var dups uint64
	final := 0 // tables whose last sample arrived: per port, the port's and queue 3's
	for final < 2*len(ports) {
		r, err := sc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range r.GetUpdate().GetUpdate() {
			dups += uint64(u.GetDuplicates())
		}
		if r.GetUpdate().GetTimestamp() == last {
			final++
		}
	}
	if dups == 0 {
		t.Fatal("nothing was coalesced: the test did not hold the subscriber back")
	}
	deadline := time.Now().Add(5 * time.Second)
	for tgt.Coalesced() != dups && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := tgt.Coalesced(); got != dups {
		t.Errorf("target counted %d coalesced samples, the subscriber was told of %d", got, dups)
	}
}

// TestSchemeCountersUnderTheTwinsOwnPath: the scheme counters published
// with a sample are served under collectors.LBRoot, one notification per
// counter with the sample's timestamp, the switch's module's, its hosts'
// and each port's apart, and the collector decodes them into its
// measurement, a port's with its port tag.
func TestSchemeCountersUnderTheTwinsOwnPath(t *testing.T) {
	tgt, c := serve(t)
	ts := time.Unix(1700000000, 7)
	tgt.PublishSchemes(ts, fabric.SchemeCounts{
		Switch: []lb.Count{{Name: lb.CountFlowlets, Value: 12}, {Name: lb.CountReroutes, Value: 3}},
		Hosts:  []lb.Count{{Name: lb.CountGapsStretched, Value: 40}},
		Ports: []fabric.PortCounts{{Port: "Ethernet8", Counts: []lb.Count{{Name: lb.CountElephantsMax, Value: 2}, {Name: lb.CountElephantIntervals, Value: 9}}},
			{Port: "Ethernet12", Counts: []lb.Count{{Name: lb.CountElephantsMax, Value: 1}}}},
	}, true)
	all := once(t, c, "leaf1", &pb.Path{Elem: []*pb.PathElem{{Name: collectors.LBRoot}}})
	got := map[string]any{}
	for _, n := range all {
		if n.GetTimestamp() != ts.UnixNano() {
			t.Errorf("sample at %d, published at %d", n.GetTimestamp(), ts.UnixNano())
		}
		pts, bad := collectors.Decode(n, "leaf1", "lab", "run")
		if len(bad) > 0 {
			t.Errorf("the collector cannot read %+v", bad)
		}
		for _, p := range pts {
			if p.Measurement != collectors.LBMeasurement || !p.Idle() {
				t.Errorf("point %+v: want measurement %s, idle", p, collectors.LBMeasurement)
			}
			key := p.Tags[collectors.LBTagScope] + "/" + p.Tags[collectors.LBTagName]
			if port, ok := p.Tags[collectors.LBTagPort]; ok {
				key = port + ":" + key
			}
			got[key] = p.Fields[collectors.LBFieldValue]
		}
	}
	want := map[string]any{"switch/flowlets": uint64(12), "switch/reroutes": uint64(3), "hosts/gaps_stretched": uint64(40),
		"Ethernet8:port/" + collectors.LBElephantsMax: uint64(2), "Ethernet8:port/" + collectors.LBElephantIntervals: uint64(9),
		"Ethernet12:port/" + collectors.LBElephantsMax: uint64(1)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
}
