package slurm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/testslurm"
)

// BenchmarkArrayOverhead is what Slurm adds per point, the point itself
// taking no time (fakeWorker writes its result at once), on the one-node
// test cluster with 2 task slots: "one" is one point's submission to
// result (sbatch, scheduling, task start, polling); "array16" a 16-point
// array's time per point.
func BenchmarkArrayOverhead(b *testing.B) {
	cl := testslurm.Start(b, 2)
	for _, bc := range []struct {
		name   string
		points int
	}{{"one", 1}, {"array16", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			idx := make([]int, bc.points)
			for i := range idx {
				idx[i] = i
			}
			var total time.Duration
			for n := 0; n < b.N; n++ {
				dir := b.TempDir()
				w := filepath.Join(dir, "worker.sh")
				os.WriteFile(w, []byte(fakeWorker), 0o755)
				e := &Executor{Opt: Options{Worker: []string{w}, Poll: 100 * time.Millisecond, Env: cl.Env}}
				start := time.Now()
				if err := e.Execute(context.Background(), dir, idx); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			b.ReportMetric(total.Seconds()/float64(b.N*bc.points), "s/point")
		})
	}
}
