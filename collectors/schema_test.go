package collectors_test

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/drivers/connectx"
)

func TestPrioOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, f string
		prio       int
		ok         bool
	}{
		{collectors.FieldPFCTx, "pfc3_tx", 3, true},
		{collectors.FieldPFCTx, "pfc3_rx", 0, false},
		{collectors.FieldPFCRx, "pfc3_rx_pause_duration_us", 0, false},
		{collectors.FieldPFCPauseUs, "pfc7_rx_pause_duration_us", 7, true},
		{collectors.FieldRNICPauseRx, "rx_prio3_pause", 3, true},
		{collectors.FieldRNICPauseRx, "rx_prio3_pause_duration", 0, false},
		{collectors.FieldRNICPauseRx, "rx_prio_pause", 0, false},
		{collectors.FieldRNICPauseRx, "rx_prioX_pause", 0, false},
	} {
		p, ok := collectors.PrioOf(c.pattern, c.f)
		if p != c.prio || ok != c.ok {
			t.Errorf("PrioOf(%q, %q) = %d, %v; want %d, %v", c.pattern, c.f, p, ok, c.prio, c.ok)
		}
	}
}

// Every gNMI leaf the collector decodes lands in a field the schema lists
// for that measurement, and every field the report needs from a switch is
// some leaf's.
func TestGNMIMapsMatchSchema(t *testing.T) {
	t.Parallel()
	decoded := map[string]bool{}
	for _, g := range collectors.GNMIMaps() {
		m, ok := collectors.MeasurementOf(g.Measurement)
		if !ok {
			t.Errorf("%s %s: measurement %q not in the schema", g.Target, g.Prefix, g.Measurement)
			continue
		}
		for leaf, f := range g.Leaves {
			if !m.Has(f) {
				t.Errorf("%s %s: leaf %s → %q, no field of %s", g.Target, g.Prefix, leaf, f, m.Name)
			}
			decoded[m.Name+"."+f] = true
		}
	}
	for _, meas := range []string{collectors.MeasPort, collectors.MeasQueue} {
		m, _ := collectors.MeasurementOf(meas)
		for _, f := range m.Fields {
			for _, n := range f.Names() {
				if f.Report && !decoded[meas+"."+n] {
					t.Errorf("report field %s.%s comes from no gNMI leaf", meas, n)
				}
			}
		}
	}
}

// TestDecodeCountersDB: a COUNTERS_DB key's counters decode to one point
// whichever way the server shapes them: the key in the prefix and one
// update per counter (string values), the key in the updates' paths (as
// sonic-gnmi's documentation shows), or the key sent whole as a JSON_IETF
// object, under the prefix (the emulated switches) or in the update's path
// (sonic-gnmi's table keys); a notification holding two keys gives two
// points, the idle mark tags them all, and a malformed object gives none.
// A known counter's value that is no unsigned integer is left out and
// named in the key's Unreadable (count and first value); an unknown
// counter's is not.
func TestDecodeCountersDB(t *testing.T) {
	t.Parallel()
	path := func(names ...string) *pb.Path {
		p := &pb.Path{}
		for _, n := range names {
			p.Elem = append(p.Elem, &pb.PathElem{Name: n})
		}
		return p
	}
	str := func(p *pb.Path, v string) *pb.Update {
		return &pb.Update{Path: p, Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}}
	}
	blob := func(p *pb.Path, v string) *pb.Update {
		return &pb.Update{Path: p, Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(v)}}}
	}
	idle := &pb.Update{Path: path(collectors.IdleLeaf), Val: &pb.TypedValue{Value: &pb.TypedValue_BoolVal{BoolVal: true}}}
	db := func(elems ...string) *pb.Path { p := path(elems...); p.Target = collectors.CountersDB; return p }
	type pt struct {
		meas   string
		tags   map[string]string
		fields map[string]any
	}
	pfc := pt{"port", map[string]string{"port": "Ethernet0"}, map[string]any{"pfc3_rx": uint64(5), "pfc3_rx_pause_duration_us": uint64(812)}}
	pfc9 := pt{"port", map[string]string{"port": "Ethernet9"}, map[string]any{"pfc7_rx": uint64(0)}}
	wm := pt{"queue", map[string]string{"port": "Ethernet0", "queue": "3"}, map[string]any{"watermark": uint64(4096)}}
	idled := func(p pt) pt {
		tags := map[string]string{"idle": collectors.IdleValue}
		for k, v := range p.tags {
			tags[k] = v
		}
		return pt{p.meas, tags, p.fields}
	}
	ts := time.Unix(1700000000, 5)
	for _, c := range []struct {
		name   string
		prefix *pb.Path
		upd    []*pb.Update
		want   []pt
		bad    []collectors.Unreadable
	}{
		{"port PFC, key in the prefix", db("COUNTERS", "Ethernet0"), []*pb.Update{str(path("SAI_PORT_STAT_PFC_3_RX_PKTS"), "5"),
			str(path("SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US"), "812"), str(path("SAI_PORT_STAT_IF_IN_ERRORS"), "1")}, []pt{pfc}, nil},
		{"queue, key in the prefix", db("COUNTERS", "Ethernet0:3"), []*pb.Update{str(path("SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"), "4096")}, []pt{wm}, nil},
		{"key in the update's path", db(), []*pb.Update{str(path("COUNTERS", "Ethernet9", "SAI_PORT_STAT_PFC_7_RX_PKTS"), "0")}, []pt{pfc9}, nil},
		{"whole key under the prefix", db("COUNTERS", "Ethernet0"), []*pb.Update{blob(&pb.Path{},
			`{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5","SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US":812,"SAI_PORT_STAT_IF_IN_ERRORS":"x","SAI_PORT_STAT_PFC_4_RX_PKTS":"N/A","SAI_PORT_STAT_PFC_5_RX_PKTS":-1}`)},
			[]pt{pfc}, []collectors.Unreadable{{Key: "COUNTERS_DB:/COUNTERS/Ethernet0", Leaf: "SAI_PORT_STAT_PFC_4_RX_PKTS", Value: "N/A", Count: 2}}},
		{"unreadable values, key in the prefix", db("COUNTERS", "Ethernet0"), []*pb.Update{str(path("SAI_PORT_STAT_PFC_3_RX_PKTS"), "5"),
			str(path("SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US"), "812"),
			{Path: path("SAI_PORT_STAT_PFC_4_RX_PKTS"), Val: &pb.TypedValue{Value: &pb.TypedValue_IntVal{IntVal: -3}}},
			{Path: path("SAI_PORT_STAT_PFC_5_RX_PKTS"), Val: &pb.TypedValue{Value: &pb.TypedValue_DoubleVal{DoubleVal: 1.5}}}},
			[]pt{pfc}, []collectors.Unreadable{{Key: "COUNTERS_DB:/COUNTERS/Ethernet0", Leaf: "SAI_PORT_STAT_PFC_4_RX_PKTS", Value: "int_val:-3", Count: 2}}},
		{"whole key, escaped and spaced", db("COUNTERS", "Ethernet0"), []*pb.Update{blob(nil,
			" {\"SAI_PORT_STAT_PFC_3_RX_PKTS\" : \"\\u0035\", \"SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US\":\"812\"}\n")}, []pt{pfc}, nil},
		{"whole keys in the updates' paths", db(), []*pb.Update{
			blob(path("COUNTERS", "Ethernet0"), `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5","SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US":"812"}`),
			blob(path("COUNTERS", "Ethernet0:3"), `{"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES":"4096"}`)}, []pt{pfc, wm}, nil},
		{"idle mark", db("COUNTERS", "Ethernet0"), []*pb.Update{blob(nil, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5","SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US":"812"}`), idle},
			[]pt{idled(pfc)}, nil},
		{"malformed object", db("COUNTERS", "Ethernet0"), []*pb.Update{blob(nil, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5",}`)}, nil,
			[]collectors.Unreadable{{Key: "COUNTERS_DB:/COUNTERS/Ethernet0", Value: `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5",}`, Count: 1}}},
	} {
		n := &pb.Notification{Timestamp: ts.UnixNano(), Prefix: c.prefix, Update: c.upd}
		pts, bad := collectors.Decode(n, "leaf1", "lab", "r")
		if !slices.Equal(bad, c.bad) {
			t.Errorf("%s: unreadable %+v, want %+v", c.name, bad, c.bad)
		}
		if len(pts) != len(c.want) {
			t.Errorf("%s: %d points %+v, want %d", c.name, len(pts), pts, len(c.want))
			continue
		}
		for i, w := range c.want {
			p := pts[i]
			if p.Measurement != w.meas || !p.Time.Equal(ts) || p.Tags["device"] != "leaf1" || !maps.Equal(p.Fields, w.fields) {
				t.Errorf("%s: point %d %+v, want %+v", c.name, i, p, w)
			}
			if p.Tags["idle"] != w.tags["idle"] {
				t.Errorf("%s: idle tag %q, want %q", c.name, p.Tags["idle"], w.tags["idle"])
			}
			for k, v := range w.tags {
				if p.Tags[k] != v {
					t.Errorf("%s: tag %s = %q, want %q", c.name, k, p.Tags[k], v)
				}
			}
		}
	}
}

// A gap made by any writer reads back as the same gap.
func TestGapPointRoundTrip(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	for _, g := range []collectors.Gap{
		{Device: "leaf1", Target: "leaf1", Path: "/interfaces", Reason: "stream broken", Since: t0, Until: t0.Add(time.Second),
			Interval: time.Millisecond, BrokeAt: t0.Add(time.Millisecond), ResumedAt: t0.Add(2 * time.Second)},
		{Device: "leaf1", Target: collectors.CountersDB, Path: "COUNTERS_DB:/COUNTERS/1/0", Reason: "coalesced", Since: t0, Until: t0.Add(time.Millisecond),
			Duplicates: 3, Interval: 100 * time.Microsecond},
		{Host: "h1", Device: "mlx5_0", Reason: "host h1: ssh: refused", Since: t0, Until: t0.Add(time.Second)},
	} {
		p := g.Point("lab", "r1", t0.Add(3*time.Second))
		if p.Measurement != collectors.MeasGap || p.Tags["lab"] != "lab" || p.Tags["run"] != "r1" {
			t.Errorf("%+v: point %+v", g, p)
		}
		var b strings.Builder
		if err := collectors.EncodeLP(&b, p); err != nil {
			t.Fatal(err)
		}
		back, err := collectors.ParseLP(strings.TrimSpace(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if got := collectors.GapOf(back); got != g {
			t.Errorf("round trip through line protocol:\n got %+v\nwant %+v", got, g)
		}
		// Its times written as unsigned fields read the same, in GapOf
		// as in Span.
		for _, k := range []string{collectors.GapSinceNs, collectors.GapUntilNs} {
			back.Fields[k] = uint64(back.Fields[k].(int64))
		}
		if got := collectors.GapOf(back); got != g {
			t.Errorf("unsigned times:\n got %+v\nwant %+v", got, g)
		}
		if s, u, ok := collectors.Span(back); !ok || s != g.Since.UnixNano() || u != g.Until.UnixNano() {
			t.Errorf("Span of unsigned times: %d %d %v", s, u, ok)
		}
	}
}

// Of a real mlx5 `ethtool -S` listing, the RNIC poller keeps the pause
// and ECN counters, per priority and global, and nothing else.
func TestKeepEthtoolOnRealOutput(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../drivers/connectx/testdata/ethtool_S.txt")
	if err != nil {
		t.Fatal(err)
	}
	vals, order, err := connectx.ParseEthtoolStats(string(b))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, n := range order {
		if collectors.KeepEthtool(n) {
			kept = append(kept, n)
		}
	}
	want := []string{"rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_prio3_pause", "rx_prio3_pause_duration",
		"tx_prio3_pause", "tx_prio3_pause_duration", "rx_prio3_marked"}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %v of %d counters, want %v", kept, len(vals), want)
	}
}
