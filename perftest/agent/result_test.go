package agent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
)

func sampleResult() Result {
	bw := perftest.NewResult(65536, 5, 0.001, true)
	return Result{Host: "h1", ScheduleID: "run/p", EpochNs: 1_700_000_000_000_000_000, LateToleranceNs: 1_000_000, MaxConcurrent: 4,
		Records: []perftest.FlowRecord{
			{FlowID: 1, Src: "h1", Dst: "h2", Bytes: 327680, StartNs: 1_700_000_000_000_100_000, EndNs: 1_700_000_000_000_200_000,
				LagNs: 2_000_000, Status: perftest.StatusOK, Tool: "ib_write_bw", Output: "out \"1\"\n", Result: &bw},
			{FlowID: 3, Src: "h1", Dst: "h3", Bytes: 10, Status: perftest.StatusFailed, Tool: "ib_write_bw", Error: "x"},
		},
		Servers: []ServerRun{{FlowID: 2, Output: "server\n", ExitCode: 0, StartNs: 5, EndNs: 6}, {FlowID: 4, Output: "<srv>", ExitCode: 1}},
		Late:    1, MaxLagNs: 2_000_000}
}

// TestResultWriterWritesWhatMarshalWrites: the streamed result is the
// same JSON as json.Marshal of the whole Result, so one format is read
// everywhere, and its late tallies come from the records written;
// outputs given as bytes are written as the same strings.
func TestResultWriterWritesWhatMarshalWrites(t *testing.T) {
	for _, res := range []Result{sampleResult(), {Host: "h9", Records: []perftest.FlowRecord{}, Servers: []ServerRun{}}} {
		var b bytes.Buffer
		w := NewResultWriter(&b, res)
		for i, r := range res.Records {
			if i%2 == 1 { // the output as bytes
				out := r.Output
				r.Output = "ignored"
				w.RecordOutput(r, []byte(out))
				continue
			}
			w.Record(r)
		}
		for i, s := range res.Servers {
			if i%2 == 0 {
				out := s.Output
				s.Output = "ignored"
				w.ServerOutput(s, []byte(out))
				continue
			}
			w.Server(s)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(res)
		if b.String() != string(want) {
			t.Errorf("streamed:\n%s\nmarshal:\n%s", b.String(), want)
		}
	}
}

// TestReadResultStreamsRecords: records come one by one with the head
// already read; the head comes back without records or servers.
func TestReadResultStreamsRecords(t *testing.T) {
	res := sampleResult()
	b, _ := json.Marshal(res)
	var got []perftest.FlowRecord
	head, err := ReadResult(bytes.NewReader(b), func(h *Result, r perftest.FlowRecord) error {
		if h.EpochNs != res.EpochNs || h.Host != "h1" {
			t.Errorf("record %d sees head %+v", r.FlowID, h)
		}
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, res.Records) {
		t.Errorf("records %+v", got)
	}
	want := res
	want.Records, want.Servers = nil, nil
	if !reflect.DeepEqual(*head, want) {
		t.Errorf("head %+v\nwant %+v", *head, want)
	}
	for _, bad := range []string{"", "[]", `{"records":{}}`, `{"records":[{"flow_id":"x"}]}`, `{"host":"a"`} {
		if _, err := ReadResult(strings.NewReader(bad), func(*Result, perftest.FlowRecord) error { return nil }); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestReadRecordsDropsOnlyTheOutput: ReadRecords gives every record as
// ReadResult does but for its empty Output, and refuses what it refuses.
func TestReadRecordsDropsOnlyTheOutput(t *testing.T) {
	res := sampleResult()
	b, _ := json.Marshal(res)
	var got []perftest.FlowRecord
	head, err := ReadRecords(bytes.NewReader(b), func(_ *Result, r perftest.FlowRecord) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]perftest.FlowRecord(nil), res.Records...)
	for i := range want {
		want[i].Output = ""
	}
	if !reflect.DeepEqual(got, want) || head.Host != "h1" || head.Late != 1 {
		t.Errorf("records %+v, head %+v", got, head)
	}
	for _, bad := range []string{`{"records":[{"flow_id":"x"}]}`, `{"records":[{"flow_id":1,"output":"x"}]`} {
		if _, err := ReadRecords(strings.NewReader(bad), func(*Result, perftest.FlowRecord) error { return nil }); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
