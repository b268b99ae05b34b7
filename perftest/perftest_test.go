package perftest

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func synthClient() Session {
	return Session{Tool: "ib_write_bw", Role: Client, Device: "mlx5_0", QPs: 1, MTU: 4096, GIDIndex: 3, TxDepth: 128, Gbits: true,
		Local:  []QPInfo{{QPN: 0x0108, PSN: 0x9d3e5c, RKey: 0x1fd4bc, VAddr: 0x007f1c2b5a0000, GID: net.ParseIP("192.168.1.10")}},
		Remote: []QPInfo{{QPN: 0x0109, PSN: 0x1d2f7a, RKey: 0x1fd1bd, VAddr: 0x007f8e4c3b0000, GID: net.ParseIP("192.168.1.11")}},
		Result: BWResult{Bytes: 65536, Iterations: 5000, PeakGbps: 97.52, AvgGbps: 97.48, MsgRateMpps: 0.185921}}
}

// TestFormatMatchesRealLayout: byte for byte the v4.5-0.17 client session.
func TestFormatMatchesRealLayout(t *testing.T) {
	want, err := os.ReadFile("testdata/write_bw_client_v4.5.txt")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := FormatBW(&b, synthClient()); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("format differs:\n got %q\nwant %q", b.String(), want)
	}
}

func TestServerSession(t *testing.T) {
	s := synthClient()
	s.Role = Server
	var b bytes.Buffer
	_ = FormatBW(&b, s)
	out := b.String()
	if !strings.HasPrefix(out, "\n************************************\n* Waiting for client to connect... *\n") {
		t.Error("server output must start with the waiting banner")
	}
	if strings.Contains(out, "TX depth") {
		t.Error("the server does not print TX depth")
	}
}

func TestParseRoundTrip(t *testing.T) {
	var b bytes.Buffer
	_ = FormatBW(&b, synthClient())
	r, err := ParseBW(b.String())
	if err != nil {
		t.Fatal(err)
	}
	want := &BWReport{Title: "RDMA_Write BW Test", Device: "mlx5_0", QPs: 1, ConnectionType: "RC", MTU: 4096, LinkType: "Ethernet",
		GIDIndex: 3, Gbits: true, Rows: []BWResult{synthClient().Result}, LocalQPNs: []uint64{0x108}, RemoteQPNs: []uint64{0x109},
		LocalGIDs: []string{"192.168.1.10"}, RemoteGIDs: []string{"192.168.1.11"}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
}

func TestParseRealSamples(t *testing.T) {
	rows, _ := os.ReadFile("testdata/issue132_rows.txt")
	r, err := ParseBW(string(rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 || r.Rows[0].AvgGbps != 0.042185 || r.Rows[2].MsgRateMpps != 2.641399 || !r.Gbits {
		t.Errorf("issue 132 rows: %+v", r.Rows)
	}
	hdr, _ := os.ReadFile("testdata/issue240_header.txt")
	_, err = ParseBW(string(hdr)) // no table: must say so
	if te, ok := err.(*ToolError); !ok || te.Kind != Unknown {
		t.Errorf("header without table: %v", err)
	}
	// the header fields still parse when a table follows
	r, err = ParseBW(string(hdr) + string(rows))
	if err != nil || r.Device != "mlx5_0" || r.GIDIndex != 3 || r.LocalGIDs[0] != "11.0.0.72" || r.RemoteQPNs[0] != 0x3606 {
		t.Errorf("issue 240 header: %+v %v", r, err)
	}
}

func TestSmallBandwidthRow(t *testing.T) {
	s := synthClient()
	s.Result = BWResult{Bytes: 2, Iterations: 5000, PeakGbps: 0.04235, AvgGbps: 0.042185, MsgRateMpps: 2.636533}
	var b bytes.Buffer
	_ = FormatBW(&b, s)
	if !strings.Contains(b.String(), " 2          5000           0.042350            0.042185            2.636533\n") {
		t.Errorf("small-BW row format wrong:\n%s", b.String())
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		out  string
		kind ErrorKind
	}{
		{"Couldn't connect to 192.168.1.10:18515\n Unable to init the socket connection\n", ConnectFailed},
		{"Couldn't listen to port 18515\n Unable to init the socket connection\n", ListenFailed},
		{"IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n", NoDevice},
		{" Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n", CompletionError},
		{" Gid index should be between 0 and 64\n Parser function exited with Error\n", BadArgs},
	} {
		_, err := ParseBW(tc.out)
		te, ok := err.(*ToolError)
		if !ok || te.Kind != tc.kind {
			t.Errorf("%q: got %v, want %s", tc.out, err, tc.kind)
		}
	}
	var b bytes.Buffer
	FormatConnectError(&b, "10.0.0.1", 18516)
	if e := ClassifyError(b.String()); e == nil || e.Kind != ConnectFailed {
		t.Errorf("FormatConnectError output not recognised: %q", b.String())
	}
}

func TestArgsRoundTrip(t *testing.T) {
	f := Flow{Tool: "ib_write_bw", SrcDev: "mlx5_0", DstDev: "mlx5_1", DstAddr: "10.1.0.2", GIDIdx: 3, Bytes: 1 << 20, MsgSize: 65536, QPs: 2, Port: 18520}
	inv, err := ParseArgs(Args(f, Client))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Device != "mlx5_0" || inv.QPs != 2 || inv.Iters != 8 || inv.Size != 65536 || inv.Server != "10.1.0.2" || inv.Port != 18520 || !inv.Gbits || inv.GIDIndex != 3 {
		t.Errorf("client %+v", inv)
	}
	if inv.TClass != -1 {
		t.Errorf("a flow without a traffic class passes none: %+v", inv)
	}
	inv, _ = ParseArgs(Args(f, Server))
	if inv.Server != "" || inv.Device != "mlx5_1" {
		t.Errorf("server %+v", inv)
	}
	f.TClass = 106
	for _, role := range []Role{Client, Server} {
		if inv, err := ParseArgs(Args(f, role)); err != nil || inv.TClass != 106 {
			t.Errorf("role %v with traffic class 106: %v %+v", role, err, inv)
		}
	}
	for _, tc := range []struct {
		argv []string
		msg  string
	}{
		{[]string{"ib_write_bw", "-x", "65"}, "Gid index should be between 0 and 64"},
		{[]string{"ib_write_bw", "-q", "0"}, "num of Qps should be between 1 and 16384"},
		{[]string{"ib_write_bw", "-n", "4"}, "Iteration num should be between 5 and 100000000"},
		{[]string{"ib_write_bw", "-s", "1K"}, ""},
		{[]string{"ib_write_bw", "a", "b"}, "Invalid Command line"},
		{[]string{"ib_write_bw", "-T", "106"}, "TOS only valid for rdma_cm"},
		{[]string{"ib_write_bw", "--bogus"}, "unrecognized option '--bogus'"},
	} {
		_, err := ParseArgs(tc.argv)
		if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%v: got %v, want %q", tc.argv, err, tc.msg)
		}
	}
}

func eps(n int) []Endpoint {
	var out []Endpoint
	for i := 0; i < n; i++ {
		out = append(out, Endpoint{Host: string(rune('a' + i)), Dev: "mlx5_0", IP: "10.0.0." + string(rune('1'+i)), GIDIndex: 3})
	}
	return out
}

func TestIncast(t *testing.T) {
	e := eps(5)
	fl, err := Incast(IncastParams{Senders: e[1:], Receiver: e[0], Bytes: 1 << 20, MsgSize: 64 << 10, Tool: "ib_write_bw"})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[int]bool{}
	for _, f := range fl {
		if f.Dst != "a" || f.Offset != 0 || f.Bytes != 1<<20 || ports[f.Port] {
			t.Errorf("bad incast flow %+v", f)
		}
		ports[f.Port] = true
	}
	if len(fl) != 4 {
		t.Fatalf("%d flows", len(fl))
	}
	if _, err := Incast(IncastParams{Senders: e[:2], Receiver: e[0], Bytes: 1, MsgSize: 1, Tool: "ib_write_bw"}); err == nil {
		t.Error("a receiver cannot send to itself")
	}
}

func TestRingAllReduce(t *testing.T) {
	const n = 4
	fl, err := RingAllReduce(AllReduceParams{Hosts: eps(n), BufferBytes: 64 << 20, MsgSize: 1 << 20, Tool: "ib_write_bw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != 2*(n-1)*n {
		t.Fatalf("%d flows, want %d", len(fl), 2*(n-1)*n)
	}
	byID := map[int]Flow{}
	portsPerDst := map[string]map[int]bool{}
	for _, f := range fl {
		byID[f.ID] = f
		if f.Bytes != 16<<20 {
			t.Errorf("flow %d carries %d bytes, want buffer/N", f.ID, f.Bytes)
		}
		if portsPerDst[f.Dst] == nil {
			portsPerDst[f.Dst] = map[int]bool{}
		}
		if portsPerDst[f.Dst][f.Port] {
			t.Errorf("port %d reused on %s", f.Port, f.Dst)
		}
		portsPerDst[f.Dst][f.Port] = true
	}
	for _, f := range fl {
		if f.Step == 0 {
			if len(f.After) != 0 {
				t.Errorf("step 0 flow %d depends on %v", f.ID, f.After)
			}
			continue
		}
		if len(f.After) != 2 {
			t.Fatalf("flow %d: after %v", f.ID, f.After)
		}
		sent, recv := byID[f.After[0]], byID[f.After[1]]
		if sent.Src != f.Src || recv.Dst != f.Src || sent.Step != f.Step-1 || recv.Step != f.Step-1 {
			t.Errorf("flow %d (step %d from %s) must wait for its previous send and receive, got %+v %+v", f.ID, f.Step, f.Src, sent, recv)
		}
	}
	if _, err := RingAllReduce(AllReduceParams{Hosts: eps(1), BufferBytes: 1, MsgSize: 1, Tool: "ib_write_bw"}); err == nil {
		t.Error("a ring of one must be refused")
	}
	for _, tc := range []struct{ steps, flows int }{{1, n}, {3, 3 * n}, {6, 6 * n}, {7, -1}, {-1, -1}} {
		fl, err := RingAllReduce(AllReduceParams{Hosts: eps(n), BufferBytes: 64 << 20, MsgSize: 1 << 20, Tool: "ib_write_bw", Steps: tc.steps})
		if (err == nil) != (tc.flows >= 0) || err == nil && len(fl) != tc.flows {
			t.Errorf("steps %d: %d flows, %v; want %d", tc.steps, len(fl), err, tc.flows)
		}
	}
}

func FuzzParseBW(f *testing.F) {
	samples, _ := filepath.Glob("testdata/*.txt")
	for _, p := range samples {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseBW(s)
		if err == nil && len(r.Rows) == 0 {
			t.Fatal("success without rows")
		}
		if err == nil && failureLine(s) != nil {
			t.Fatalf("success despite %v", failureLine(s))
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("ib_write_bw -d mlx5_0 -x 3 -q 4 -s 64K -n 100 --report_gbits 10.0.0.1")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseArgs(strings.Fields(s))
	})
}
