package emulator

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// An emulated host's result carries, for every flow, the output perftest
// would print for it, each rendered on its own (one buffer serves them
// all): it parses back to that flow's own message size and iterations.
func TestAgentResultOutputsParseToTheirFlows(t *testing.T) {
	t.Parallel()
	inv := mustLab(t)
	l := &Lab{inv: inv}
	h1, h2 := inv.Hosts[0].Name, inv.Hosts[1].Name
	h := &host{lab: l, inv: inv.Hosts[0]}
	flows := []perftest.Flow{
		{ID: 1, Src: h1, Dst: h2, Tool: "ib_write_bw", Bytes: 64 << 10, MsgSize: 4096, QPs: 1},
		{ID: 2, Src: h1, Dst: h2, Tool: "ib_write_bw", Bytes: 3 << 20, MsgSize: 65536, QPs: 2},
		{ID: 3, Src: h2, Dst: h1, Tool: "ib_write_bw", Bytes: 8192, MsgSize: 1024, QPs: 1},
	}
	base := time.Unix(1700000000, 0)
	results := map[int]fabric.Result{}
	for i, f := range flows {
		results[f.ID] = fabric.Result{ID: f.ID, Start: int64(i) * 1000, End: int64(i)*1000 + 50000}
	}
	var out bytes.Buffer
	head := agent.Result{Host: h1, ScheduleID: "s", EpochNs: base.UnixNano()}
	if err := h.writeResult(&out, head, &perftest.Schedule{ID: "s", Epoch: base, Host: h1, Flows: flows}, base, results); err != nil {
		t.Fatal(err)
	}
	byID := map[int]perftest.Flow{}
	for _, f := range flows {
		byID[f.ID] = f
	}
	n := 0
	if _, err := agent.ReadResult(&out, func(_ *agent.Result, rec perftest.FlowRecord) error {
		n++
		f := byID[rec.FlowID]
		rep, err := perftest.ParseBW(rec.Output)
		if err != nil {
			t.Errorf("flow %d: %v in\n%s", rec.FlowID, err, rec.Output)
			return nil
		}
		if len(rep.Rows) != 1 || rep.Rows[0].Bytes != f.MsgSize || rep.Rows[0].Iterations != f.Iterations()*int64(f.QPs) || rep.QPs != f.QPs {
			t.Errorf("flow %d: parsed %d QPs, %+v; want %d QPs, %d-byte messages x %d", rec.FlowID, rep.QPs, rep.Rows, f.QPs, f.MsgSize, f.Iterations()*int64(f.QPs))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d records, want h1's 2 flows", n)
	}
}

// TestQPInfosKeepTheirNumbers: the QP numbers an emulated host prints are
// FNV-1a of "host/port/qp" (as they were when printed with fmt into the
// hash), so outputs stay the same from version to version.
func TestQPInfosKeepTheirNumbers(t *testing.T) {
	t.Parallel()
	r := inventory.RNIC{IP: "10.0.3.7"}
	for _, tc := range []struct {
		host      string
		port, qps int
	}{{"h1", 18515, 1}, {"leaf3-host15", 0, 4}, {"", -7, 2}} {
		got := qpInfos(tc.host, r, perftest.Invocation{Port: tc.port, QPs: tc.qps})
		if len(got) != tc.qps {
			t.Fatalf("%+v: %d QPs", tc, len(got))
		}
		for i, q := range got {
			hs := fnv.New32a()
			fmt.Fprintf(hs, "%s/%d/%d", tc.host, tc.port, i)
			v := hs.Sum32()
			want := perftest.QPInfo{QPN: 0x100 + uint64(v%0x3f00), PSN: uint64(v>>8) & 0xffffff,
				RKey: 0x1f0000 + uint64(v%0xffff), VAddr: 0x7f0000000000 + uint64(v)<<12, GID: net.ParseIP(r.IP)}
			if !reflect.DeepEqual(q, want) {
				t.Errorf("%+v QP %d: %+v, want %+v", tc, i, q, want)
			}
		}
	}
}
