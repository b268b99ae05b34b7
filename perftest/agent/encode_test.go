package agent

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
)

// TestEncodersKnowEveryField: the hand-written encoders (and the
// decoders, decode.go) know exactly these types' JSON fields, in order; a
// field added to a type must be added to them too.
func TestEncodersKnowEveryField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    any
		want string
	}{
		{perftest.FlowRecord{}, "flow_id src dst bytes start_ns end_ns lag_ns,omitempty status tool group,omitempty step,omitempty error,omitempty output,omitempty result,omitempty"},
		{perftest.BWResult{}, "bytes iterations bw_peak bw_average msg_rate"},
		{ServerRun{}, "flow_id output stderr,omitempty exit_code start_ns,omitempty end_ns,omitempty"},
		{perftest.Schedule{}, "id epoch host,omitempty point_flows,omitempty host_flows,omitempty flows"},
		{perftest.Flow{}, "id src dst src_dev dst_dev dst_addr gid_index tool bytes msg_size qps port tclass,omitempty offset_ns after,omitempty group,omitempty step,omitempty"},
	} {
		typ := reflect.TypeOf(tc.v)
		var tags []string
		for i := range typ.NumField() {
			tags = append(tags, typ.Field(i).Tag.Get("json"))
		}
		if got := strings.Join(tags, " "); got != tc.want {
			t.Errorf("%s's JSON fields are now\n%s\nthe encoders and decoders know\n%s", typ, got, tc.want)
		}
	}
}

// variedRecords covers every field set and unset, strings encoding/json
// escapes (quotes, backslashes, control and HTML characters, invalid
// UTF-8, U+2028/9, non-ASCII) and floats on both sides of its notation
// switches.
func variedRecords() []perftest.FlowRecord {
	bw := perftest.NewResult(65536, 5000, 0.0033, true)
	out := []perftest.FlowRecord{{}, {FlowID: -1, Bytes: -2, StartNs: math.MinInt64, EndNs: math.MaxInt64, LagNs: 1, Step: -3, Result: &perftest.BWResult{}}}
	for _, s := range []string{"h1", "a\"b\\c/d", "\x00\x01\b\f\n\r\t\x1f\x7f", "<tag> & co", "caf\xc3\xa9 \xe2\x80\xa8 \xe2\x80\xa9 \xff\xfe end", "\xed\xa0\x80", "日本"} {
		out = append(out, perftest.FlowRecord{FlowID: 7, Src: s, Dst: s + "x", Bytes: 1 << 40, StartNs: 1, EndNs: 2, Status: s, Tool: s,
			Group: s, Step: 2, Error: s, Output: s + "\n", Result: &bw})
	}
	for _, f := range []float64{1e-6, 9.99e-7, 1e21, 9.99e20, 1e-300, -1e-7, math.Copysign(0, -1), 123.456, 1e20, 5e-324, math.MaxFloat64} {
		out = append(out, perftest.FlowRecord{Result: &perftest.BWResult{PeakGbps: f, AvgGbps: -f, MsgRateMpps: f / 3}})
	}
	return out
}

// TestEncodersWriteWhatMarshalWrites: a record and a server run are
// appended byte for byte as json.Marshal writes them; what Marshal
// refuses (NaN, infinities) is refused.
func TestEncodersWriteWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	for i, rec := range variedRecords() {
		checkEncodeRecord(t, i, rec)
		checkEncodeServer(t, i, ServerRun{FlowID: rec.FlowID, Output: rec.Output, Stderr: rec.Error, ExitCode: rec.Step, StartNs: rec.LagNs, EndNs: rec.EndNs})
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		checkEncodeRecord(t, -1, perftest.FlowRecord{Result: &perftest.BWResult{AvgGbps: f}})
	}
}

func checkEncodeRecord(t *testing.T, i int, rec perftest.FlowRecord) {
	t.Helper()
	want, wantErr := json.Marshal(rec)
	got, err := appendRecord([]byte("kept"), &rec, rec.Output)
	out := rec.Output
	rec.Output = "ignored"
	gotBytes, errBytes := appendRecord([]byte("kept"), &rec, []byte(out))
	if (err != nil) != (wantErr != nil) || (errBytes != nil) != (wantErr != nil) {
		t.Fatalf("record %d: error %v (output as bytes: %v), Marshal's %v", i, err, errBytes, wantErr)
	}
	if err == nil && (string(got) != "kept"+string(want) || string(gotBytes) != "kept"+string(want)) {
		t.Errorf("record %d:\n got %s\n(output as bytes %s)\nwant %s", i, got, gotBytes, "kept"+string(want))
	}
}

func checkEncodeServer(t *testing.T, i int, sr ServerRun) {
	t.Helper()
	want, _ := json.Marshal(sr)
	got := appendServer(nil, &sr, sr.Output)
	gotBytes := appendServer(nil, &ServerRun{FlowID: sr.FlowID, Output: "ignored", Stderr: sr.Stderr, ExitCode: sr.ExitCode,
		StartNs: sr.StartNs, EndNs: sr.EndNs}, []byte(sr.Output))
	if string(got) != string(want) || string(gotBytes) != string(want) {
		t.Errorf("server run %d:\n got %s\n(output as bytes %s)\nwant %s", i, got, gotBytes, want)
	}
}

// TestSafeRun: the eight-bytes-at-a-time scan stops where the byte by
// byte one does, for every byte value at every offset.
func TestSafeRun(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		for at := range 20 {
			b := []byte(strings.Repeat("a", 20))
			b[at] = byte(c)
			want := at
			if c < 0x80 && jsonSafe[c] {
				want = len(b)
			}
			for from := range at + 1 {
				if got := safeRun(b, from); got != want {
					t.Fatalf("byte %#x at %d, from %d: stops at %d, want %d", c, at, from, got, want)
				}
				if got := safeRun(string(b), from); got != want {
					t.Fatalf("byte %#x at %d, from %d (string): stops at %d, want %d", c, at, from, got, want)
				}
			}
		}
	}
}

// FuzzEncodeRecord: any record and server run is appended as Marshal
// writes it.
func FuzzEncodeRecord(f *testing.F) {
	f.Add(3, "h1", "ok", "out\n\"x\"", int64(65536), int64(1700000000000000000), 97.5, 1e-7, true)
	f.Add(0, "", "", "", int64(0), int64(0), 0.0, 0.0, false)
	f.Fuzz(func(t *testing.T, id int, host, status, output string, n, ns int64, bw, rate float64, result bool) {
		rec := perftest.FlowRecord{FlowID: id, Src: host, Dst: status, Bytes: n, StartNs: ns, EndNs: -ns, LagNs: n - ns, Status: status,
			Tool: host, Group: output, Step: id / 3, Error: status, Output: output}
		if result {
			rec.Result = &perftest.BWResult{Bytes: n, Iterations: ns, PeakGbps: bw, AvgGbps: rate, MsgRateMpps: bw * rate}
		}
		checkEncodeRecord(t, 0, rec)
		checkEncodeServer(t, 0, ServerRun{FlowID: id, Output: output, Stderr: host, ExitCode: id, StartNs: n, EndNs: ns})
	})
}

// BenchmarkAppendString: escaping a perftest output for the result.
func BenchmarkAppendString(b *testing.B) {
	sess := perftest.Session{Tool: "ib_write_bw", QPs: 1, MTU: 4096, TxDepth: 128, Device: "mlx5_0", GIDIndex: 3, Gbits: true,
		Local: []perftest.QPInfo{{QPN: 0x1234}}, Remote: []perftest.QPInfo{{QPN: 0x2345}}, Result: perftest.NewResult(65536, 77, 1e-4, true)}
	out, _ := perftest.AppendBW(nil, sess)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = appendString(buf[:0], out)
	}
}
