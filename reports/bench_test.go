package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// benchArchive writes (once; it is kept in the temporary directory and
// reused while complete) a run archive of n flows: 10 points (ecmp and
// drill at loads 0.4 to 0.8) of n/10 flows each between random pairs of a
// 128-host leaf-spine, sizes spread over the three default buckets, and a
// little switch telemetry.
func benchArchive(b *testing.B, n int) string {
	dir := filepath.Join(os.TempDir(), "labctl-bench-report-"+strconv.Itoa(n))
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if err := os.MkdirAll(filepath.Join(dir, "telemetry"), 0o755); err != nil {
		b.Fatal(err)
	}
	lab, err := inventory.Generate("leafspine:8x8:16@100")
	if err != nil {
		b.Fatal(err)
	}
	m := Manifest{RunID: "bench", Scenario: "lb-sweep", Outcome: "ok", Lab: lab}
	per := n / 10
	for i, scheme := range []string{"ecmp", "drill"} {
		for j, load := range []float64{0.4, 0.5, 0.6, 0.7, 0.8} {
			start := t0 + int64(i*5+j)*int64(per)*1000
			m.Points = append(m.Points, PointMeta{Name: fmt.Sprintf("%s/l%g", scheme, load), Pattern: "workload", Lab: lab.Name, Status: StatusOK,
				Params: map[string]any{ParamScheme: scheme, ParamLoad: load, ParamWorkload: "websearch"}, RequestedLoad: load,
				Hosts: 128, Flows: per, LinkGbps: 100, StartNs: start, EndNs: start + int64(per)*1000, TelemetryIntervalNs: 100 * 1000})
		}
	}
	mb, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), mb, 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "flows.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_ = WriteFlowsHeader(w)
	var line []byte
	for k, pm := range m.Points {
		factor := 1.5 + float64(k%5)*0.3
		for i := range per {
			x := uint64(k*per+i) * 0x9e3779b97f4a7c15 // a cheap, reproducible spread
			size := int64(1000 + x%3_000_000)
			if x%10 < 7 {
				size = int64(1000 + x%99_000) // mostly small flows, as in web search
			}
			src, dst := 1+x%128, 1+(x>>8)%128
			if src == dst {
				dst = 1 + dst%128
			}
			start := pm.StartNs + int64(i)*1000
			fct := int64(float64(size)*0.08*factor) + 3000
			line = append(line[:0], "bench,"...)
			line = append(append(line, pm.Name...), ',')
			line = append(strconv.AppendInt(line, int64(i), 10), ",,0,h"...)
			line = append(strconv.AppendUint(line, src, 10), ",h"...)
			line = append(strconv.AppendUint(line, dst, 10), ',')
			for _, v := range []int64{size, start, start + fct} {
				line = append(strconv.AppendInt(line, v, 10), ',')
			}
			line = append(strconv.AppendInt(line, fct, 10), ",ok,ib_write_bw\n"...)
			_, _ = w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	var lp []byte
	for _, pm := range m.Points {
		for s := int64(0); s <= 10; s++ {
			ts := pm.StartNs + s*(pm.EndNs-pm.StartNs)/10
			for leaf := 1; leaf <= 8; leaf++ {
				lp = fmt.Appendf(lp, "port,lab=l,run=bench,device=leaf%d,port=17/0 pfc3_tx=%du,tx_pkts=%du,ecn_marked=%du %d\n", leaf, s*10, s*1000, s*7, ts)
				lp = fmt.Appendf(lp, "queue,lab=l,run=bench,device=leaf%d,port=17/0,queue=3 depth_bytes=%du %d\n", leaf, (s%4)*10240, ts)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "telemetry", "port.lp"), lp, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkReport10M: analysis and every format of the report of 10
// million flow records (target: under 10 s and 500 MB). The archive is
// generated once into the temporary directory. peak-sys-MiB is the memory
// the Go runtime took from the OS (an upper bound of the heap's share of
// RSS); bench/run.sh also records the process's max RSS.
func BenchmarkReport10M(b *testing.B) {
	dir := benchArchive(b, 10_000_000)
	b.ResetTimer()
	for b.Loop() {
		run, err := LoadRun(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		s, err := Analyse(run)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range Formats() {
			if err := Write(io.Discard, s, f); err != nil {
				b.Fatal(err)
			}
		}
		if n := s.Points[9].FCT.Count; n != 1_000_000 {
			b.Fatalf("last point has %d flows", n)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "peak-sys-MiB")
}
