package collectors

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLPRoundTripWithEscapes(t *testing.T) {
	p := Point{Measurement: "port, x", Time: time.Unix(0, 1700000000123456789),
		Tags:   map[string]string{"device": "leaf 1", "port": "1/0,a=b", "run": `r\1`},
		Fields: map[string]any{"tx_bytes": int64(1 << 40), "delta": int64(-3), "ratio": 0.25, "reason": `said "no" \ stop`, "ok": true}}
	var b bytes.Buffer
	if err := EncodeLP(&b, p); err != nil {
		t.Fatal(err)
	}
	got, err := ParseLP(b.String())
	if err != nil {
		t.Fatalf("%q: %v", b.String(), err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n got %#v\nwant %#v\nline %q", got, p, b.String())
	}
}

// A line break in a value (a gap's reason quoting a tool's stderr) would
// end the line: it is written as a space, and the line reads back whole.
func TestLPLineBreaksStayOnOneLine(t *testing.T) {
	p := Point{Measurement: "collector_gap", Time: time.Unix(0, 1),
		Tags:   map[string]string{"host": "h\n1"},
		Fields: map[string]any{"reason": "exit 1: netlink error: no device\r\nnetlink error: No such device\n"}}
	var b bytes.Buffer
	if err := EncodeLP(&b, p); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Fatalf("%d line breaks in %q", n, b.String())
	}
	got, err := ParseLP(strings.TrimSuffix(b.String(), "\n"))
	if err != nil {
		t.Fatalf("%q: %v", b.String(), err)
	}
	if got.Tags["host"] != "h 1" || got.Fields["reason"] != "exit 1: netlink error: no device  netlink error: No such device " {
		t.Errorf("read back %q %q", got.Tags, got.Fields)
	}
}

func TestLPKnownLine(t *testing.T) {
	var b bytes.Buffer
	_ = EncodeLP(&b, Point{Measurement: "queue", Tags: map[string]string{"device": "leaf1", "port": "1/0", "queue": "3"},
		Fields: map[string]any{"depth_bytes": uint64(524288)}, Time: time.Unix(0, 42)})
	if want := "queue,device=leaf1,port=1/0,queue=3 depth_bytes=524288i 42\n"; b.String() != want {
		t.Fatalf("got %q want %q", b.String(), want)
	}
	for _, bad := range []string{"", "m", "m f=", "m f=\"x", "m,t f=1", "m f=1 notatime", " f=1"} {
		if _, err := ParseLP(bad); err == nil {
			t.Errorf("ParseLP(%q) accepted", bad)
		}
	}
}

func FuzzParseLP(f *testing.F) {
	f.Add("port,device=leaf1,port=1/0 tx_bytes=10u,pfc3_tx=2u 1700000000000000000")
	f.Add(`m,a\ b=c\,d f="x \"y\"" 1`)
	f.Fuzz(func(t *testing.T, line string) {
		p, err := ParseLP(line)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := EncodeLP(&b, p); err != nil {
			return // e.g. NaN floats parse but cannot be written
		}
		q, err := ParseLP(b.String())
		for k, v := range p.Fields { // unsigned values come back as integers
			if u, ok := v.(uint64); ok {
				p.Fields[k] = int64(u)
			}
		}
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("re-encoding %q as %q: %v %#v %#v", line, b.String(), err, p, q)
		}
	})
}

// The archive's files only ever hold whole lines between writes: a buffer
// that fills up goes to disk at a line boundary.
func TestArchiveSinkWritesWholeLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := NewArchiveSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1000)
	for i := range 2000 { // ~2 MB: the 256 KiB buffer fills several times
		p := Point{Measurement: "m", Tags: map[string]string{"i": strconv.Itoa(i)}, Fields: map[string]any{"s": long}, Time: time.Unix(0, int64(i+1))}
		if err := a.Write(context.Background(), []Point{p}); err != nil {
			t.Fatal(err)
		}
		if i%97 == 0 { // what a crash now would leave on disk
			b, err := os.ReadFile(filepath.Join(dir, "m.lp"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if len(b) > 0 && b[len(b)-1] != '\n' {
				t.Fatalf("after point %d the file ends mid-line (%d bytes)", i, len(b))
			}
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("/interfaces/interface[name=*]/state/counters")
	f.Add("/qos/interfaces/interface[interface-id=Ethernet0]/output/queues/queue[name=3]/state")
	f.Add("COUNTERS/Ethernet*/Queues")
	f.Add("/a[b=c\\]d]/e")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		if p == nil {
			t.Fatalf("ParsePath(%q): nil path and no error", s)
		}
	})
}
