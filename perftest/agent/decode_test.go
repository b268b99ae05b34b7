package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/labctl/labctl/perftest"
)

// readResultStd is readResult as it was written on encoding/json's
// Decoder: the reference the hand-written decoder must agree with.
func readResultStd(r io.Reader, output bool, rec func(head *Result, r perftest.FlowRecord) error) (*Result, error) {
	type skipped struct{ json.RawMessage }
	type recordSansOutput struct {
		perftest.FlowRecord
		Output skipped `json:"output,omitempty"`
	}
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	if err := expectDelimStd(dec, '{'); err != nil {
		return nil, err
	}
	head := &Result{}
	rest := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "records":
			err = eachItemStd(dec, func() error {
				if !output {
					var fr recordSansOutput
					if err := dec.Decode(&fr); err != nil {
						return err
					}
					return rec(head, fr.FlowRecord)
				}
				var fr perftest.FlowRecord
				if err := dec.Decode(&fr); err != nil {
					return err
				}
				return rec(head, fr)
			})
		case "servers":
			err = eachItemStd(dec, func() error { var skip struct{}; return dec.Decode(&skip) })
		default:
			var raw json.RawMessage
			if err = dec.Decode(&raw); err == nil {
				rest[key] = raw
				b, _ := json.Marshal(rest)
				err = json.Unmarshal(b, head)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if err := expectDelimStd(dec, '}'); err != nil {
		return nil, err
	}
	head.Records, head.Servers = nil, nil
	return head, nil
}

func eachItemStd(dec *json.Decoder, item func() error) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want a list, found %v", tok)
	}
	for dec.More() {
		if err := item(); err != nil {
			return err
		}
	}
	return expectDelimStd(dec, ']')
}

func expectDelimStd(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

// readBoth reads in with the hand-written decoder and the reference and
// fails t where they disagree: on accepting it, on the records seen
// (before an error too) and on the head.
func readBoth(t *testing.T, in []byte, output bool, oneByte bool) {
	t.Helper()
	collect := func(read func(io.Reader, bool, func(*Result, perftest.FlowRecord) error) (*Result, error), r io.Reader) ([]perftest.FlowRecord, []Result, *Result, error) {
		var recs []perftest.FlowRecord
		var heads []Result
		head, err := read(r, output, func(h *Result, fr perftest.FlowRecord) error {
			recs, heads = append(recs, fr), append(heads, *h)
			return nil
		})
		return recs, heads, head, err
	}
	var r io.Reader = bytes.NewReader(in)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	gotRecs, gotHeads, got, err := collect(readResult, r)
	wantRecs, wantHeads, want, wantErr := collect(readResultStd, bytes.NewReader(in))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("input %q (output %v): error %v, encoding/json's %v", in, output, err, wantErr)
	}
	if !reflect.DeepEqual(gotRecs, wantRecs) || !reflect.DeepEqual(gotHeads, wantHeads) {
		t.Fatalf("input %q (output %v): records\n%+v\nheads %+v\nencoding/json's\n%+v\nheads %+v", in, output, gotRecs, gotHeads, wantRecs, wantHeads)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q (output %v): head %+v, encoding/json's %+v", in, output, got, want)
	}
}

// resultInputs are results as the writer writes them (varied records) and
// as it never does: reordered, spaced, escaped, case-folded keys, nulls,
// unknown fields, and broken in every part.
func resultInputs() [][]byte {
	res := sampleResult()
	res.Records = append(res.Records, variedRecords()...)
	full, _ := json.Marshal(res)
	indented, _ := json.MarshalIndent(res, " ", "\t")
	ins := [][]byte{full, indented, full[:len(full)/2], full[:len(full)-1]}
	for _, s := range []string{
		`{}`, `{"records":null,"servers":null}`, `{"records":[],"servers":[]}`, `null`, ``, `[]`, `{"records":{}}`,
		`{"records":[{"flow_id":"x"}]}`, `{"host":"a"`, `{"records":[{"flow_id":1,"output":"x"}]`,
		`{"late":3,"host":"h","records":[null,{}],"epoch_ns":5,"records":[{"FLOW_ID":2,"Src":"s","\u0073tatus":"ok","output":5}]}`,
		`{"records":[{"flow_id":1,"result":{"bytes":1,"bw_peak":1e3,"BW_Average":-0.5e-2},"result":{"msg_rate":2}}]}`,
		`{"records":[{"flow_id":1,"result":{"bytes":1},"result":null}]}`,
		`{"records":[{"flow_id":1.5}]}`, `{"records":[{"flow_id":1e2}]}`, `{"records":[{"flow_id":01}]}`, `{"records":[{"flow_id":-}]}`,
		`{"records":[{"flow_id":99999999999999999999}]}`, `{"records":[{"result":{"bw_peak":1e999}}]}`,
		`{"records":[{"src":"a\"b\\c\u00e9\ud800x\n","tool":null,"extra":{"deep":[1,true,false,null,"s",{"a":[]}]}}]}`,
		`{"records":[{"src":"bad \q escape"}]}`, `{"records":[{"src":"ctl ` + "\x01" + `"}]}`, "{\"records\":[{\"src\":\"\xff\xfe\"}]}",
		`{"records":[{"src":1}]}`, `{"records":[{"result":"x"}]}`, `{"records":[{"result":[]}]}`, `{"records":[1]}`,
		`{"records":[{},]}`, `{"records":[{}],}`, `{"records":[{} {}]}`, `{"records":[{"a" 1}]}`, `{"records":[{"a":tru}]}`,
		`{"servers":[{"flow_id":1,"output":"x"},null]}`, `{"servers":[1]}`, `{"servers":["x"]}`, `{"servers":[[]]}`,
		`{"host":"a","late":"x"}`, `{"Host":"b","host":"a"}`, `{"max_lag_ns":1,"records":[{"flow_id":1}]} trailing`,
		` { "records" : [ { "flow_id" : 3 } ] , "late" : 1 } `, `{"records":[{"flow_id":1}]`, `{"x":` + strings.Repeat("[", 10001),
	} {
		ins = append(ins, []byte(s))
	}
	return ins
}

// TestReadResultAgreesWithEncodingJSON: the hand-written decoder reads
// what the Decoder-based reader read, refuses what it refused and gives
// the same records and heads, with and without outputs, whatever the
// reader's chunks.
func TestReadResultAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range resultInputs() {
		for _, output := range []bool{true, false} {
			readBoth(t, in, output, false)
			readBoth(t, in, output, true)
		}
	}
}

// TestReadResultAcrossBuffers: a result larger than the decoder's buffer,
// with outputs longer than it, reads whole.
func TestReadResultAcrossBuffers(t *testing.T) {
	t.Parallel()
	res := sampleResult()
	for i := range 500 {
		res.Records = append(res.Records, perftest.FlowRecord{FlowID: i, Src: "h1", Output: strings.Repeat("line\t\"x\"\n", i*50)})
	}
	b, _ := json.Marshal(res)
	if len(b) < 1<<20 {
		t.Fatalf("only %d bytes", len(b))
	}
	readBoth(t, b, true, false)
	readBoth(t, b, false, false)
}

// FuzzReadResult: on any input the hand-written decoder and the
// Decoder-based reader agree (accepted or refused, records, head).
func FuzzReadResult(f *testing.F) {
	for _, in := range resultInputs() {
		f.Add(in, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, output bool) {
		readBoth(t, in, output, false)
	})
}

func readScheduleStd(r io.Reader) (*perftest.Schedule, error) {
	var s perftest.Schedule
	if err := json.NewDecoder(bufio.NewReader(r)).Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

func scheduleInputs() [][]byte {
	flows := []perftest.Flow{
		{ID: 1, Src: "h1", Dst: "h2", SrcDev: "mlx5_0", DstDev: "mlx5_1", DstAddr: "10.0.0.2", GIDIdx: 3, Tool: "ib_write_bw", Bytes: 1 << 30,
			MsgSize: 65536, QPs: 2, Port: 18515, TClass: 106, Offset: 1500 * time.Microsecond, After: []int{0, 7}, Group: "g\u2028<1>", Step: 4},
		{ID: 2, Src: "h2", Dst: "h1", Tool: "ib_read_bw", Offset: -1},
	}
	sched := perftest.Schedule{ID: "run/p", Epoch: time.Date(2026, 11, 25, 9, 38, 0, 123456789, time.UTC), Host: "h1", PointFlows: 9, Flows: flows}
	full, _ := json.Marshal(sched)
	indented, _ := json.MarshalIndent(sched, "", "  ")
	whole, _ := json.Marshal(perftest.Schedule{ID: "x", Epoch: time.Unix(5, 0).In(time.FixedZone("", 3600)), Flows: []perftest.Flow{}})
	ins := [][]byte{full, indented, whole, full[:len(full)-1]}
	for _, s := range []string{
		`null`, `{}`, ``, `{"flows":null}`, `{"flows":[]}`, `{"flows":[null,{}]}`, `{"flows":{}}`, `{"epoch":null}`, `{"epoch":5}`,
		`{"epoch":"2026-13-01T00:00:00Z"}`, `{"epoch":"2026-11-25T09:38:00+01:00","ID":"a","id":"b"}`, `{"flows":[{"after":[]}]}`,
		`{"flows":[{"after":null}]}`, `{"flows":[{"after":[1,null,3]}]}`, `{"flows":[{"after":[1.5]}]}`, `{"flows":[{"after":"x"}]}`,
		`{"flows":[{"offset_ns":1e3}]}`, `{"flows":[{"Offset_NS":12,"QPS":3,"unknown":[{}]}]}`, `{"point_flows":"7"}`, `{"id":"a"} {"id":"b"}`,
		`{"id":"a"} garbage`, `{"flows":[{"id":1},]}`, `[]`, `"x"`,
		`{"host_flows":2,"flows":[{"id":1},{"id":2}]}`, `{"host_flows":999999999,"flows":[{"id":1}]}`, `{"host_flows":-3,"flows":[]}`,
		`{"flows":[{"id":1}],"host_flows":5}`, `{"host_flows":1,"flows":null}`,
	} {
		ins = append(ins, []byte(s))
	}
	return ins
}

func readScheduleBoth(t *testing.T, in []byte) {
	t.Helper()
	got, err := readSchedule(iotest.OneByteReader(bytes.NewReader(in)))
	want, wantErr := readScheduleStd(bytes.NewReader(in))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("input %q: error %v, encoding/json's %v", in, err, wantErr)
	}
	if err == nil && (!reflect.DeepEqual(got, want) || !got.Epoch.Equal(want.Epoch)) {
		t.Fatalf("input %q:\n got %+v\nwant %+v", in, got, want)
	}
}

// TestReadScheduleAgreesWithEncodingJSON: a schedule decodes as
// json.Decoder decoded it, or is refused where it was refused.
func TestReadScheduleAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range scheduleInputs() {
		readScheduleBoth(t, in)
	}
}

// FuzzReadSchedule: on any input the hand-written decoder and
// json.Decoder agree.
func FuzzReadSchedule(f *testing.F) {
	for _, in := range scheduleInputs() {
		f.Add(in)
	}
	f.Fuzz(readScheduleBoth)
}

// benchItems are a host's records and server runs as an emulated point
// writes them: 1,500 flows sent and as many received, each with a
// client's and a server's perftest output.
func benchItems() ([]perftest.FlowRecord, []ServerRun) {
	sess := perftest.Session{Tool: "ib_write_bw", QPs: 1, MTU: 4096, TxDepth: 128, Device: "mlx5_0", GIDIndex: 3, Gbits: true,
		Local: []perftest.QPInfo{{QPN: 0x1234, PSN: 0xabcdef, RKey: 0x1f1234, VAddr: 0x7f0012345000}}, Remote: []perftest.QPInfo{{QPN: 0x2345}}}
	var recs []perftest.FlowRecord
	var srvs []ServerRun
	for i := range 1500 {
		bw := perftest.NewResult(65536, int64(5+i), 1e-4, true)
		sess.Result, sess.Role = bw, perftest.Client
		out, _ := perftest.AppendBW(nil, sess)
		recs = append(recs, perftest.FlowRecord{FlowID: i, Src: "leaf0-h0", Dst: "leaf3-h7", Bytes: int64(i) * 4096, StartNs: 1_700_000_000_000_000_000 + int64(i),
			EndNs: 1_700_000_000_100_000_000, LagNs: int64(i), Status: "ok", Tool: "ib_write_bw", Output: string(out), Result: &bw})
		sess.Role = perftest.Server
		out, _ = perftest.AppendBW(nil, sess)
		srvs = append(srvs, ServerRun{FlowID: 10000 + i, Output: string(out), StartNs: 1, EndNs: 2})
	}
	return recs, srvs
}

var benchHead = Result{Host: "leaf0-h0", ScheduleID: "run/p", EpochNs: 1_700_000_000_000_000_000, LateToleranceNs: 1e6}

func benchResult(b *testing.B) []byte {
	var out bytes.Buffer
	recs, srvs := benchItems()
	writeBenchResult(b, &out, recs, srvs)
	return out.Bytes()
}

func writeBenchResult(b *testing.B, out *bytes.Buffer, recs []perftest.FlowRecord, srvs []ServerRun) {
	w := NewResultWriter(out, benchHead)
	for _, r := range recs {
		_ = w.Record(r)
	}
	for _, s := range srvs {
		_ = w.Server(s)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReadRecords: the runner's read of one host's result (outputs
// skipped), hand-written against the Decoder-based reader.
func BenchmarkReadRecords(b *testing.B) {
	in := benchResult(b)
	for _, r := range []struct {
		name string
		read func(io.Reader, bool, func(*Result, perftest.FlowRecord) error) (*Result, error)
	}{{"scanner", readResult}, {"decoder", readResultStd}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := r.read(bytes.NewReader(in), false, func(*Result, perftest.FlowRecord) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadSchedule: an agent's read of a host's part of a point's
// schedule (3,000 flows), hand-written against json.Decoder.
func BenchmarkReadSchedule(b *testing.B) {
	s := perftest.Schedule{ID: "run/p", Epoch: time.Unix(1_700_000_000, 0).UTC(), Host: "leaf0-h0", PointFlows: 195979}
	for i := range 3000 {
		s.Flows = append(s.Flows, perftest.Flow{ID: i * 7, Src: "leaf0-h0", Dst: "leaf3-h7", SrcDev: "mlx5_0", DstDev: "mlx5_0", DstAddr: "10.0.3.7",
			GIDIdx: 3, Tool: "ib_write_bw", Bytes: int64(i) * 1000, MsgSize: 65536, QPs: 1, Port: 18515 + i, TClass: 106, Offset: time.Duration(i) * 3333})
	}
	in, _ := json.Marshal(s)
	for _, r := range []struct {
		name string
		read func(io.Reader) (*perftest.Schedule, error)
	}{{"scanner", readSchedule}, {"decoder", readScheduleStd}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := r.read(bytes.NewReader(in)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResultWriter: writing a host's result, appended by hand
// against json.Marshal of each item (the writer before encode.go).
func BenchmarkResultWriter(b *testing.B) {
	recs, srvs := benchItems()
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			writeBenchResult(b, &out, recs, srvs)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			for _, r := range recs {
				j, _ := json.Marshal(r)
				out.Write(j)
				out.WriteByte(',')
			}
			for _, s := range srvs {
				j, _ := json.Marshal(s)
				out.Write(j)
				out.WriteByte(',')
			}
		}
	})
}
