package collectors_test

import (
	"strings"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
)

// A counter whose value is no unsigned integer ("N/A", as some SONiC
// platforms write for a counter they lack) is missing telemetry: the
// collector keeps the samples' other counters and records a collector_gap
// per key and run of such samples, from the first to the last, counting
// samples and values and naming the leaf and the value, so that the run
// ends degraded rather than silently short. A readable sample ends the
// run; so does the end of collection (here for a key sent whole whose
// object is not JSON).
func TestUnreadableValuesLeaveAGap(t *testing.T) {
	c, sink, stop := countersDBTargetStop(t)
	t0 := time.Unix(1700000000, 0).UnixNano()
	str := func(leaf, v string) *pb.Update {
		return &pb.Update{Path: &pb.Path{Elem: []*pb.PathElem{{Name: leaf}}}, Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}}
	}
	publish := func(port string, i int64, upd ...*pb.Update) {
		t.Helper()
		if err := c.GnmiUpdate(&pb.Notification{Timestamp: t0 + i*100_000, Atomic: true,
			Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: port}}}, Update: upd}); err != nil {
			t.Fatal(err)
		}
	}
	all := func(collectors.Point) bool { return true }
	gapOf := func(path string) []collectors.Point {
		return sink.find("collector_gap", func(p collectors.Point) bool { return p.Fields["path"] == path })
	}
	publish("Ethernet12", 1, &pb.Update{Path: &pb.Path{}, Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5",`)}}})
	for i := int64(1); i <= 3; i++ {
		publish("Ethernet8", i, str("SAI_PORT_STAT_PFC_3_TX_PKTS", "17"), str("SAI_PORT_STAT_PFC_3_RX_PKTS", "N/A"))
		waitFor(t, "the sample", func() bool { return len(sink.find("port", all)) == int(i) })
	}
	if g := sink.find("collector_gap", all); len(g) != 0 {
		t.Fatalf("gaps %+v while the runs go on", g)
	}
	publish("Ethernet8", 4, str("SAI_PORT_STAT_PFC_3_TX_PKTS", "18"), str("SAI_PORT_STAT_PFC_3_RX_PKTS", "3"))
	waitFor(t, "the gap", func() bool { return len(gapOf("COUNTERS_DB:/COUNTERS/Ethernet8")) == 1 })
	got := sink.find("port", all)
	if len(got) != 4 || got[0].Fields["pfc3_tx"] != uint64(17) || got[0].Fields["pfc3_rx"] != nil || got[3].Fields["pfc3_rx"] != uint64(3) {
		t.Errorf("samples %+v, want three with pfc3_tx 17 and no pfc3_rx, then one with both", got)
	}
	g := collectors.GapOf(gapOf("COUNTERS_DB:/COUNTERS/Ethernet8")[0])
	if g.Unreadable != 3 || g.UnreadableSamples != 3 || g.Device != "leaf1" || g.Target != "COUNTERS_DB" ||
		g.Since.UnixNano() != t0+100_000 || g.Until.UnixNano() != t0+300_000 || g.Missed() != 0 {
		t.Errorf("gap %+v", g)
	}
	for _, want := range []string{"SAI_PORT_STAT_PFC_3_RX_PKTS", `"N/A"`} {
		if !strings.Contains(g.Reason, want) {
			t.Errorf("reason %q does not name %s", g.Reason, want)
		}
	}
	if s := g.String(); !strings.Contains(s, "3 samples without 3 of their values") {
		t.Errorf("warning %q", s)
	}
	stop()
	broken := gapOf("COUNTERS_DB:/COUNTERS/Ethernet12")
	if len(broken) != 1 || !strings.Contains(collectors.GapOf(broken[0]).Reason, "not a JSON object") || collectors.GapOf(broken[0]).UnreadableSamples != 1 {
		t.Errorf("gap of the broken object, written when collection ended: %+v", broken)
	}
}

// A run of unreadable samples holds while the same leaf is unreadable,
// whatever its value (a signed counter gone negative changes every
// sample); another leaf starts a new one.
func TestUnreadableRunsFollowTheLeaf(t *testing.T) {
	c, sink, stop := countersDBTargetStop(t)
	t0 := time.Unix(1700000000, 0).UnixNano()
	rx, tx := collectors.PrioName(collectors.SAIPFCRxPkts, 3), collectors.PrioName(collectors.SAIPFCTxPkts, 3)
	str := func(leaf, v string) *pb.Update {
		return &pb.Update{Path: &pb.Path{Elem: []*pb.PathElem{{Name: leaf}}}, Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}}
	}
	publish := func(i int64, rxv, txv string) {
		t.Helper()
		if err := c.GnmiUpdate(&pb.Notification{Timestamp: t0 + i*100_000, Atomic: true,
			Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet0"}}},
			Update: []*pb.Update{str(rx, rxv), str(tx, txv)}}); err != nil {
			t.Fatal(err)
		}
		// one sample at a time: the target coalesces what the collector has not read
		waitFor(t, "the sample", func() bool { return len(sink.find("port", func(collectors.Point) bool { return true })) == int(i) })
	}
	publish(1, "-1", "5")
	publish(2, "-2", "5")
	publish(3, "-3", "5")
	publish(4, "7", "N/A")
	stop()
	gaps := sink.find("collector_gap", func(collectors.Point) bool { return true })
	if len(gaps) != 2 {
		t.Fatalf("%d gaps %+v, want the rx run and the tx one", len(gaps), gaps)
	}
	if g := collectors.GapOf(gaps[0]); g.UnreadableSamples != 3 || !strings.Contains(g.Reason, rx+` = "-1"`) || g.Until.UnixNano() != t0+300_000 {
		t.Errorf("the rx run's gap %+v", g)
	}
	if g := collectors.GapOf(gaps[1]); g.UnreadableSamples != 1 || !strings.Contains(g.Reason, tx) {
		t.Errorf("the tx run's gap %+v", g)
	}
}
