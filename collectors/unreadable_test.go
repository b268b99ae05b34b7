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
// collector keeps the sample's other counters and records a
// collector_gap at the sample's time that names the key, the leaf and
// the value, so that the run ends degraded rather than silently short. A
// key sent whole whose object is not JSON gets one too.
func TestUnreadableValuesLeaveAGap(t *testing.T) {
	c, sink := countersDBTarget(t)
	ts := time.Unix(1700000000, 0).UnixNano()
	str := func(leaf, v string) *pb.Update {
		return &pb.Update{Path: &pb.Path{Elem: []*pb.PathElem{{Name: leaf}}}, Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}}
	}
	if err := c.GnmiUpdate(&pb.Notification{Timestamp: ts, Atomic: true,
		Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet8"}}},
		Update: []*pb.Update{str("SAI_PORT_STAT_PFC_3_TX_PKTS", "17"), str("SAI_PORT_STAT_PFC_3_RX_PKTS", "N/A")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.GnmiUpdate(&pb.Notification{Timestamp: ts, Atomic: true,
		Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet12"}}},
		Update: []*pb.Update{{Path: &pb.Path{}, Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5",`)}}}}}); err != nil {
		t.Fatal(err)
	}
	all := func(collectors.Point) bool { return true }
	waitFor(t, "the gaps", func() bool { return len(sink.find("collector_gap", all)) == 2 })
	got := sink.find("port", all)
	if len(got) != 1 || got[0].Fields["pfc3_tx"] != uint64(17) || got[0].Fields["pfc3_rx"] != nil {
		t.Errorf("samples %+v, want one with pfc3_tx 17 and no pfc3_rx", got)
	}
	broken := sink.find("collector_gap", func(p collectors.Point) bool { return p.Fields["path"] == "COUNTERS_DB:COUNTERS/Ethernet12" })
	if len(broken) != 1 || !strings.Contains(collectors.GapOf(broken[0]).Reason, "not a JSON object") {
		t.Errorf("gap of the broken object: %+v", broken)
	}
	p := sink.find("collector_gap", func(p collectors.Point) bool { return p.Fields["path"] == "COUNTERS_DB:COUNTERS/Ethernet8" })[0]
	g := collectors.GapOf(p)
	if g.Unreadable != 1 || g.Device != "leaf1" || g.Target != "COUNTERS_DB" || g.Path != "COUNTERS_DB:COUNTERS/Ethernet8" ||
		g.Since.UnixNano() != ts || g.Until.UnixNano() != ts || g.Missed() != 0 {
		t.Errorf("gap %+v", g)
	}
	for _, want := range []string{"SAI_PORT_STAT_PFC_3_RX_PKTS", `"N/A"`} {
		if !strings.Contains(g.Reason, want) {
			t.Errorf("reason %q does not name %s", g.Reason, want)
		}
	}
	if s := g.String(); !strings.Contains(s, "one sample without 1 of its values") {
		t.Errorf("warning %q", s)
	}
}
