package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/labctl/labctl/perftest"
)

// variedSchedules cover every field set and unset, strings encoding/json
// escapes, extreme numbers, epochs in zones, with nanoseconds and without,
// and flows nil, empty and many.
func variedSchedules() []perftest.Schedule {
	utc := time.Date(2026, 11, 29, 8, 31, 16, 164583547, time.UTC)
	zoned := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -(5*3600+30*60)))
	out := []perftest.Schedule{{}, {Epoch: utc, Flows: []perftest.Flow{}}, {ID: "r/p", Epoch: zoned, Host: "h1", PointFlows: 3, HostFlows: 2}}
	var flows []perftest.Flow
	for i, s := range []string{"h1", "a\"b\\c/d", "\x00\x01\b\f\n\r\t\x1f\x7f", "<tag> & co", "caf\xc3\xa9 \xe2\x80\xa8 \xff end", "日本"} {
		flows = append(flows, perftest.Flow{ID: i, Src: s, Dst: s + "x", SrcDev: s, DstDev: "mlx5_0", DstAddr: s, GIDIdx: 3, Tool: s,
			Bytes: 1 << 40, MsgSize: 4096, QPs: 2, Port: 18515 + i, TClass: 106, Offset: time.Duration(i) * time.Microsecond,
			After: []int{i, -i}, Group: s, Step: i})
	}
	flows = append(flows, perftest.Flow{ID: math.MinInt, Bytes: math.MaxInt64, MsgSize: math.MinInt64, Offset: math.MinInt64, After: []int{}, Step: -1},
		perftest.Flow{})
	out = append(out, perftest.Schedule{ID: "run-1/w", Epoch: utc, Host: "h\u2028", PointFlows: -1, HostFlows: math.MaxInt, Flows: flows})
	return out
}

// TestAppendScheduleWritesWhatMarshalWrites: a schedule is appended, and
// written (in pieces when large), byte for byte as json.Marshal writes it;
// an epoch Marshal refuses is refused, and so is a writer's error.
func TestAppendScheduleWritesWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	scheds := variedSchedules()
	big := scheds[len(scheds)-1]
	for len(big.Flows) < 2000 { // some 300 KB: written in several pieces
		big.Flows = append(big.Flows, big.Flows...)
	}
	for i, s := range append(scheds, big) {
		checkAppendSchedule(t, i, s)
	}
	checkAppendSchedule(t, -1, perftest.Schedule{Epoch: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err := WriteSchedule(failingWriter{}, &big); err == nil || err.Error() != "disk full" {
		t.Errorf("WriteSchedule to a failing writer: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func checkAppendSchedule(t *testing.T, i int, s perftest.Schedule) {
	t.Helper()
	want, wantErr := json.Marshal(&s)
	got, err := AppendSchedule([]byte("kept"), &s)
	var written bytes.Buffer
	werr := WriteSchedule(&written, &s)
	if (err != nil) != (wantErr != nil) || (werr != nil) != (wantErr != nil) {
		t.Fatalf("schedule %d: error %v (written: %v), Marshal's %v", i, err, werr, wantErr)
	}
	if err == nil && (string(got) != "kept"+string(want) || written.String() != string(want)) {
		t.Errorf("schedule %d:\n got %s\n(written %s)\nwant %s", i, got, written.String(), "kept"+string(want))
	}
}

// FuzzAppendSchedule: any schedule of one flow is appended as Marshal
// writes it.
func FuzzAppendSchedule(f *testing.F) {
	f.Add("run/p", "h1", int64(1795937819537378222), 3, "mlx5_0", "10.0.0.2", int64(65536), int64(-5), 106, true)
	f.Add("", "", int64(0), 0, "", "", int64(0), int64(0), 0, false)
	f.Fuzz(func(t *testing.T, id, host string, epochNs int64, n int, dev, addr string, bytes, offset int64, tclass int, after bool) {
		fl := perftest.Flow{ID: n, Src: host, Dst: id, SrcDev: dev, DstDev: dev, DstAddr: addr, GIDIdx: n % 7, Tool: id, Bytes: bytes,
			MsgSize: offset, QPs: n / 3, Port: tclass, TClass: tclass, Offset: time.Duration(offset), Group: addr, Step: n % 5}
		if after {
			fl.After = []int{n, tclass}
		}
		s := perftest.Schedule{ID: id, Epoch: time.Unix(0, epochNs).In(time.FixedZone("z", tclass%86400)), Host: host, PointFlows: n,
			HostFlows: tclass, Flows: []perftest.Flow{fl, {}}}
		checkAppendSchedule(t, 0, s)
	})
}

// BenchmarkAppendSchedule: one host's part of the paper point (3,000
// flows), by AppendSchedule and by json.Marshal.
//
//	go test -run XXX -bench AppendSchedule -benchmem ./perftest/agent/
func BenchmarkAppendSchedule(b *testing.B) {
	s := perftest.Schedule{ID: "alistorage-paper-20261129-073658-5c7c1d/workload", Epoch: time.Now().UTC(), Host: "h1",
		PointFlows: 195979, HostFlows: 3000}
	for i := range 3000 {
		s.Flows = append(s.Flows, perftest.Flow{ID: i * 64, Src: "h1", Dst: "h" + strconv.Itoa(2+i%127), SrcDev: "mlx5_0", DstDev: "mlx5_0",
			DstAddr: "10.2.0." + strconv.Itoa(1+i%127), GIDIdx: 3, Tool: "ib_write_bw", Bytes: int64(1000 + i*37), MsgSize: 1048576, QPs: 1,
			Port: 18515 + i%4000, TClass: 106, Offset: time.Duration(i) * 3 * time.Microsecond, Group: "workload"})
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for range b.N {
			var err error
			if buf, err = AppendSchedule(buf[:0], &s); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			out, err := json.Marshal(&s)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
}
