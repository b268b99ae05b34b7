package perftest

import (
	"bytes"
	"testing"
	"time"
)

func BenchmarkParseBW(b *testing.B) {
	var out bytes.Buffer
	_ = FormatBW(&out, synthClient())
	s := out.String()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseBW(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPoissonConditioned: one workload point of the acceptance matrix
// (8 hosts at 100 Gb/s, 10 ms window, load 0.5), the draw conditioned on
// its load (perftest.Poisson), per CDF.
func BenchmarkPoissonConditioned(b *testing.B) {
	for _, name := range []string{"websearch", "alistorage2019"} {
		b.Run(name, func(b *testing.B) {
			c, err := CDFByName(name)
			if err != nil {
				b.Fatal(err)
			}
			hosts, _ := rackedHosts(2, 4)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Poisson(PoissonParams{Hosts: hosts, CDF: c, Load: 0.5, LinkGbps: 100,
					Duration: 10 * time.Millisecond, Seed: int64(i), Tolerance: DefaultLoadTolerance}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
