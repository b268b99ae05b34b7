package reports

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// genFlows is flows.csv generated on the fly, n rows over the points
// named, FCTs cycling through a fixed range: a source of any size that
// holds no rows itself.
type genFlows struct {
	n, i   int
	points []string
	buf    bytes.Buffer
	line   []byte
}

func (g *genFlows) Read(p []byte) (int, error) {
	if g.i == 0 && g.buf.Len() == 0 {
		g.buf.WriteString(strings.Join(flowsHeader(), ",") + "\n")
	}
	for g.buf.Len() < len(p) && g.i < g.n {
		i := g.i
		fct := 10_000 + int64(i*7919)%1_000_000
		size := int64(1000 + (i*104729)%3_000_000)
		start := t0 + int64(i)*1000
		// Appended by hand: fmt would allocate for every number, and this
		// test measures allocations.
		b := g.line[:0]
		b = append(append(append(b, "r,"...), g.points[i%len(g.points)]...), ',')
		b = append(strconv.AppendInt(b, int64(i), 10), ",,0,h"...)
		b = append(strconv.AppendInt(b, int64(1+i%4), 10), ",h"...)
		b = append(strconv.AppendInt(b, int64(5+i%4), 10), ',')
		for _, v := range []int64{size, start, start + fct} {
			b = append(strconv.AppendInt(b, v, 10), ',')
		}
		b = append(strconv.AppendInt(b, fct, 10), ",ok,ib_write_bw\n"...)
		g.buf.Write(b)
		g.line = b
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// The analysis of n flows keeps points x buckets histograms, not flows:
// ten times the flows allocate about the same.
func TestAnalyseMemoryDoesNotGrowWithFlows(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1.1 million rows")
	}
	lab, err := inventory.Generate("leafspine:2x2:4@100")
	if err != nil {
		t.Fatal(err)
	}
	points := []string{"a", "b", "c"}
	alloc := func(n int) uint64 {
		run := &Run{Manifest: Manifest{RunID: "r", Lab: lab}, Flows: func(fn func(FlowRow) error) error {
			return ReadFlowsCSV(&genFlows{n: n, points: points}, fn)
		}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Analyse(run)
		runtime.ReadMemStats(&after)
		if err != nil || len(s.Points) != 3 || s.Points[0].FCT.Count+s.Points[1].FCT.Count+s.Points[2].FCT.Count != n {
			t.Fatalf("%d flows: %v, %+v", n, err, s)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(100_000), alloc(1_000_000)
	t.Logf("allocated %d KiB for 100k flows, %d KiB for 1M", small>>10, large>>10)
	if large > small+small/10+1<<20 {
		t.Errorf("1M flows allocated %d KiB, 100k %d KiB: memory grows with flows", large>>10, small>>10)
	}
}

// readFlowsStd is the plain encoding/csv reading of flows.csv that
// ReadFlowsCSV's fast path must agree with.
func readFlowsStd(r io.Reader) ([]FlowRow, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, err
	}
	for i, h := range flowsHeader() {
		if i >= len(head) || head[i] != h {
			return nil, errors.New("header")
		}
	}
	var rows []FlowRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		r := FlowRow{Run: rec[0], Point: rec[1], Group: rec[3], Src: rec[5], Dst: rec[6], Status: rec[11], Tool: rec[12]}
		var errs [6]error
		r.FlowID, errs[0] = strconv.Atoi(rec[2])
		r.Step, errs[1] = strconv.Atoi(rec[4])
		r.Size, errs[2] = strconv.ParseInt(rec[7], 10, 64)
		r.StartNs, errs[3] = strconv.ParseInt(rec[8], 10, 64)
		r.EndNs, errs[4] = strconv.ParseInt(rec[9], 10, 64)
		r.FCTNs, errs[5] = strconv.ParseInt(rec[10], 10, 64)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
		if r.Size < 0 || r.FCTNs < 0 {
			return nil, errors.New("negative")
		}
		rows = append(rows, r)
	}
}

// FuzzReadFlowsCSVMatchesEncodingCSV: the fast reader accepts what
// encoding/csv accepts and reads the same rows.
func FuzzReadFlowsCSVMatchesEncodingCSV(f *testing.F) {
	head := strings.Join(flowsHeader(), ",") + "\n"
	for _, s := range []string{
		head + "r,p,1,g,0,a,b,1,2,3,1,ok,t\n",
		head + "r,\"p,\"\"q\"\"\",1,\"multi\nline\",0,a,b,1,2,3,1,ok,t\r\n\nr,p,2,,0,a,b,1,2,3,1,ok,t",
		head + "r,p,1,g,0,a,b,99999999999999999999,2,3,1,ok,t\n",
		head + "r,p,+1,g,-0,a,b,1,2,3,1,ok,t\r",
		head + "r,p\"x,1,g,0,a,b,1,2,3,1,ok,t\n",
		head + "r,p,1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []FlowRow
		err := ReadFlowsCSV(strings.NewReader(s), func(r FlowRow) error { got = append(got, r); return nil })
		var te *TornLineError
		if errors.As(err, &te) {
			// a last line without a newline is skipped: the rows read
			// are encoding/csv's of the input up to the last newline,
			// unless the cut record began before it (in quotes, or the
			// header), which encoding/csv then refuses
			want, werr := readFlowsStd(strings.NewReader(s[:strings.LastIndexByte(s, '\n')+1]))
			if werr == nil && !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				t.Fatalf("rows before the torn line differ:\n%+v\n%+v\n%q", got, want, s)
			}
			return
		}
		want, werr := readFlowsStd(strings.NewReader(s))
		if (err == nil) != (werr == nil) {
			t.Fatalf("fast reader err %v, encoding/csv err %v\n%q", err, werr, s)
		}
		if err == nil && !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Fatalf("rows differ:\n%+v\n%+v\n%q", got, want, s)
		}
	})
}

// FuzzParseBuckets: never panics; what it accepts is ascending and
// positive, and the names it gives the edges parse back to them.
func FuzzParseBuckets(f *testing.F) {
	for _, s := range []string{"100KB,1MB", "10kb, 100 KiB ,1MiB", "1,2,3", "5B", "1GB,2GiB", "", "1MB,100KB", "-1", "9223372036854775807GB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		edges, err := ParseBuckets(s)
		if err != nil {
			return
		}
		if checkBuckets(edges) != nil || len(edges) == 0 {
			t.Fatalf("%q accepted as %v", s, edges)
		}
		var names []string
		for _, e := range edges {
			names = append(names, sizeName(e))
		}
		again, err := ParseBuckets(strings.Join(names, ","))
		if err != nil || !reflect.DeepEqual(again, edges) {
			t.Fatalf("%q: %v printed as %v parses to %v, %v", s, edges, names, again, err)
		}
	})
}

func TestParseBuckets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"100KB,1MB", []int64{100_000, 1_000_000}, ""},
		{" 64KiB , 1MiB,1GB ", []int64{64 << 10, 1 << 20, 1_000_000_000}, ""},
		{"1500", []int64{1500}, ""},
		{"1MB,100KB", nil, "ascending"},
		{"100KB,100000", nil, "ascending"},
		{"0", nil, "positive"},
		{"1.5MB", nil, "positive size"},
		{"", nil, "want sizes"},
		{"10XB", nil, "positive size"},
	} {
		got, err := ParseBuckets(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if n := bucketName(1, []int64{64 << 10, 1 << 20}); n != "64KiB-1MiB" {
		t.Errorf("bucket name %q", n)
	}
}
