package collectors

import (
	"fmt"
	"io"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
)

func benchPoint() Point {
	return Point{Measurement: "port", Time: time.Unix(0, 1700000000000000000),
		Tags:   map[string]string{"lab": "leafspine:2x4:8@100", "run": "incast-20261122-101500-a1b2c3", "device": "leaf1", "port": "1/0"},
		Fields: map[string]any{"tx_bytes": uint64(1 << 40), "rx_bytes": uint64(1 << 39), "tx_pkts": uint64(1 << 30), "rx_pkts": uint64(1 << 29), "drops": uint64(0)}}
}

func BenchmarkEncodeLP(b *testing.B) {
	p := benchPoint()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := EncodeLP(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendLP is what the archive does per sample: one reused line.
func BenchmarkAppendLP(b *testing.B) {
	p := benchPoint()
	var line []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		if line, err = AppendLP(line[:0], p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLP: one archived port sample read back (the report reads
// every one).
func BenchmarkParseLP(b *testing.B) {
	line, err := AppendLP(nil, benchPoint())
	if err != nil {
		b.Fatal(err)
	}
	s := string(line)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseLP(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode: one interface-counters notification to its point.
func BenchmarkDecode(b *testing.B) {
	n := &pb.Notification{Timestamp: 1795590721024543840, Atomic: true,
		Prefix: &pb.Path{Target: "leaf1", Elem: []*pb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "1/0"}}, {Name: "state"}, {Name: "counters"}}},
		Update: []*pb.Update{upd("in-octets", uval(1<<40)), upd("out-octets", uval(1<<39)), upd("in-pkts", uval(1<<30)), upd("out-pkts", uval(1<<29)), upd("in-discards", uval(0)), upd("out-discards", uval(0))}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if pts, _ := Decode(n, "leaf1", "lab", "run"); len(pts) != 1 {
			b.Fatal("no point")
		}
	}
}

// BenchmarkDecodePFCTable: a port's 24 PFC counters of COUNTERS_DB, one
// update per counter (string values) against the key sent whole as one
// JSON_IETF object (the emulated switches, sonic-gnmi's table keys).
func BenchmarkDecodePFCTable(b *testing.B) {
	prefix := &pb.Path{Target: CountersDB, Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet0"}}}
	var each []*pb.Update
	blob := []byte{'{'}
	for p := 0; p < 8; p++ {
		for _, c := range []string{SAIPFCRxPkts, SAIPFCTxPkts, SAIPFCPauseUs} {
			name, v := PrioName(c, p), fmt.Sprint(1000*p+17)
			each = append(each, upd(name, &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}))
			if len(blob) > 1 {
				blob = append(blob, ',')
			}
			blob = fmt.Appendf(blob, "%q:%q", name, v)
		}
	}
	blob = append(blob, '}')
	whole := []*pb.Update{{Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: blob}}}}
	for _, c := range []struct {
		name string
		upd  []*pb.Update
	}{{"per-counter", each}, {"whole", whole}} {
		b.Run(c.name, func(b *testing.B) {
			n := &pb.Notification{Timestamp: 1795590721024543840, Atomic: true, Prefix: prefix, Update: c.upd}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if pts, _ := Decode(n, "leaf1", "lab", "run"); len(pts) != 1 || len(pts[0].Fields) != 24 {
					b.Fatalf("points %v", pts)
				}
			}
		})
	}
}
