package emulator

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// BenchmarkResultGzip: gzipping one emulated host's result (3,000 flows
// sent and received, with the outputs perftest would print: the paper
// point's share of a host) at level 1, with the lab's writers
// (klauspost/compress, gzipPool) against the standard library's (what
// the agent binary uses on hardware), and reading it back with the
// standard library's reader (agent.OpenResult). MB/s are of the result's
// JSON.
//
//	go test -run XXX -bench ResultGzip -benchtime 20x -cpu 1 ./emulator/
func BenchmarkResultGzip(b *testing.B) {
	inv := mustLab(b)
	h1, h2 := inv.Hosts[0].Name, inv.Hosts[1].Name
	h := &host{lab: &Lab{inv: inv}, inv: inv.Hosts[0]}
	base := time.Unix(1700000000, 0)
	var flows []perftest.Flow
	results := map[int]fabric.Result{}
	for i := range 3000 {
		src, dst := h1, h2
		if i%2 == 1 {
			src, dst = h2, h1
		}
		f := perftest.Flow{ID: i, Src: src, Dst: dst, Tool: "ib_write_bw", Bytes: int64(1000 + 37*i), MsgSize: 4096, QPs: 1}
		flows = append(flows, f)
		results[i] = fabric.Result{ID: i, Start: int64(i) * 3000, End: int64(i)*3000 + 9000 + int64(i%17)*1000}
	}
	var raw bytes.Buffer
	head := agent.Result{Host: h1, ScheduleID: "s", EpochNs: base.UnixNano()}
	if err := h.writeResult(&raw, head, &perftest.Schedule{ID: "s", Epoch: base, Host: h1, Flows: flows}, base, results); err != nil {
		b.Fatal(err)
	}
	var pool gzipPool
	for _, w := range []struct {
		name string
		get  func(io.Writer) io.WriteCloser
	}{
		{"lab", pool.Get},
		{"stdlib", func(w io.Writer) io.WriteCloser { zw, _ := stdgzip.NewWriterLevel(w, stdgzip.BestSpeed); return zw }},
	} {
		var zipped bytes.Buffer
		b.Run("write/"+w.name, func(b *testing.B) {
			b.SetBytes(int64(raw.Len()))
			for range b.N {
				zipped.Reset()
				zw := w.get(&zipped)
				if _, err := zw.Write(raw.Bytes()); err != nil || zw.Close() != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(zipped.Len())/float64(raw.Len())*100, "%size")
		})
		b.Run("read/"+w.name, func(b *testing.B) {
			b.SetBytes(int64(raw.Len()))
			for range b.N {
				zr, err := stdgzip.NewReader(bytes.NewReader(zipped.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, zr); err != nil || n != int64(raw.Len()) {
					b.Fatalf("read %d of %d bytes: %v", n, raw.Len(), err)
				}
			}
		})
	}
}
