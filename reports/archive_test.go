package reports

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
)

func TestFlowsCSVRoundTrip(t *testing.T) {
	recs := []perftest.FlowRecord{
		{FlowID: 1, Src: "h1", Dst: "h9", Bytes: 1 << 20, StartNs: 100, EndNs: 350, Status: perftest.StatusOK, Tool: "ib_write_bw", Group: "ring, a", Step: 3},
		{FlowID: 2, Src: "h2", Dst: "h9", Bytes: 5, StartNs: 100, EndNs: 900, Status: perftest.StatusFailed, Tool: "ib_write_bw"},
	}
	var b bytes.Buffer
	if err := WriteFlowsHeader(&b); err != nil {
		t.Fatal(err)
	}
	if err := WriteFlowsCSV(&b, "r1", "p1", recs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "run,point,flow_id,group,step,src,dst,size,start_ns,end_ns,fct_ns,status,tool\n") {
		t.Fatalf("header: %q", b.String())
	}
	var got []FlowRow
	if err := ReadFlowsCSV(&b, func(r FlowRow) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []FlowRow{
		{Run: "r1", Point: "p1", Group: "ring, a", Src: "h1", Dst: "h9", Status: "ok", Tool: "ib_write_bw", FlowID: 1, Step: 3, Size: 1 << 20, StartNs: 100, EndNs: 350, FCTNs: 250},
		// A failed flow has no FCT: its end says when it gave up.
		{Run: "r1", Point: "p1", Src: "h2", Dst: "h9", Status: "failed", Tool: "ib_write_bw", FlowID: 2, Size: 5, StartNs: 100, EndNs: 900},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestReadFlowsCSVErrors(t *testing.T) {
	head := "run,point,flow_id,group,step,src,dst,size,start_ns,end_ns,fct_ns,status,tool\n"
	stop := errors.New("stop")
	for _, tc := range []struct {
		name, in, want string
		fnErr          error
	}{
		{"empty", "", "header", nil},
		{"short header", "run,point\n", "2 columns", nil},
		{"renamed column", strings.Replace(head, "size", "bytes", 1), `column 8 is "bytes"`, nil},
		{"bad integer", head + "r,p,x,g,0,a,b,1,2,3,1,ok,t\n", "flows.csv:2", nil},
		{"negative size", head + "r,p,1,g,0,a,b,-1,2,3,1,ok,t\n", "negative", nil},
		{"wrong field count", head + "r,p,1\n", "wrong number of fields", nil},
		{"callback error passes through", head + "r,p,1,g,0,a,b,1,2,3,1,ok,t\n", "stop", stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ReadFlowsCSV(strings.NewReader(tc.in), func(FlowRow) error { return tc.fnErr })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if tc.fnErr != nil && !errors.Is(err, tc.fnErr) {
				t.Errorf("callback error not returned as is: %v", err)
			}
		})
	}
	// Extra columns from a newer writer are ignored.
	in := strings.TrimSuffix(head, "\n") + ",extra\nr,p,1,g,0,a,b,1,2,3,1,ok,t,x\n"
	n := 0
	if err := ReadFlowsCSV(strings.NewReader(in), func(FlowRow) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("extra column: %d rows, err %v", n, err)
	}
}

// FuzzReadFlowsCSV: the reader never panics, and whatever it accepts
// survives being written back and read again unchanged.
func FuzzReadFlowsCSV(f *testing.F) {
	var b bytes.Buffer
	WriteFlowsHeader(&b)
	WriteFlowsCSV(&b, "r", "p", []perftest.FlowRecord{{FlowID: 1, Src: "a", Dst: "b", Bytes: 10, StartNs: 1, EndNs: 5, Status: "ok", Group: `q"x`}})
	f.Add(b.String())
	f.Add("run,point,flow_id,group,step,src,dst,size,start_ns,end_ns,fct_ns,status,tool\nr,p,1,,0,a,b,1,2,3,1,ok,t\n")
	f.Fuzz(func(t *testing.T, s string) {
		var rows []FlowRow
		if err := ReadFlowsCSV(strings.NewReader(s), func(r FlowRow) error { rows = append(rows, r); return nil }); err != nil {
			return
		}
		var out bytes.Buffer
		WriteFlowsHeader(&out)
		if err := writeFlowRows(&out, rows); err != nil {
			t.Fatal(err)
		}
		var again []FlowRow
		if err := ReadFlowsCSV(&out, func(r FlowRow) error { again = append(again, r); return nil }); err != nil {
			t.Fatalf("re-read of written rows: %v\n%q", err, out.String())
		}
		if !reflect.DeepEqual(rows, again) {
			t.Fatalf("round trip changed rows:\n%+v\n%+v", rows, again)
		}
	})
}
