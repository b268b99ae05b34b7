package perftest

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestLoadEveryShippedCDF(t *testing.T) {
	files, _ := filepath.Glob("workloads/*.cdf")
	if len(files) < 12 {
		t.Fatalf("expected the 12 shipped distributions, found %d", len(files))
	}
	// Means under linear interpolation, as documented with the data.
	want := map[string]float64{"websearch": 1711250, "alistorage2019": 40870, "fb-hadoop": 120421, "websearch-ns2": 1710004, "webserver-ns2": 66121}
	for _, f := range files {
		c, err := LoadCDF(f)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := want[c.Name]; ok && math.Abs(c.Mean()-m) > 1 {
			t.Errorf("%s: mean %.0f, want %.0f", c.Name, c.Mean(), m)
		}
	}
}

func TestParseCDFErrors(t *testing.T) {
	for _, bad := range []string{"0 0\n", "0 0\n10 50\n", "0 0\n10 50\n5 100\n", "0 0\nx 100\n", "0 0 0\n"} {
		if _, err := ParseCDF(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	// an ns-2 step: 15 % of flows are exactly 9000 B
	c, err := ParseCDF(strings.NewReader("9000 0\n9000 0.15\n10000 1\n"))
	if err != nil || c.Sample(0.1) != 9000 || c.At(9000) != 0.15 {
		t.Errorf("step: %v %d %v", err, c.Sample(0.1), c.At(9000))
	}
}

// TestSampledSizesFollowTheCDF: a Kolmogorov-Smirnov test of 20000 draws
// against the CDF they come from (alpha = 0.01).
func TestSampledSizesFollowTheCDF(t *testing.T) {
	for _, name := range []string{"websearch", "alistorage2019", "fb-hadoop"} {
		c, err := LoadCDF("workloads/" + name + ".cdf")
		if err != nil {
			t.Fatal(err)
		}
		hosts := []Endpoint{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "d"}}
		fl, err := Poisson(PoissonParams{Hosts: hosts, CDF: c, Load: 0.5, LinkGbps: 100, Duration: time.Duration(20000 * c.Mean() * 8 / (100 * 0.5) / 4), Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, len(fl))
		for i, f := range fl {
			xs[i] = float64(f.Bytes)
		}
		sort.Float64s(xs)
		n := float64(len(xs))
		var d float64
		for i, x := range xs {
			// the empirical CDF jumps at x; integer truncation shifts a
			// draw down by < 1 byte, so compare at x+1 as well
			f := c.At(x + 1)
			d = math.Max(d, math.Max(math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n)))
		}
		if crit := 1.63 / math.Sqrt(n); d > crit {
			t.Errorf("%s: KS distance %.4f over %d draws exceeds %.4f", name, d, len(xs), crit)
		}
	}
}

func TestPoissonLoadAndPairs(t *testing.T) {
	c, _ := LoadCDF("workloads/alistorage2019.cdf")
	var hosts []Endpoint
	for i := 0; i < 16; i++ {
		hosts = append(hosts, Endpoint{Host: fmt.Sprintf("h%d", i), Dev: "mlx5_0", IP: fmt.Sprintf("10.0.0.%d", i+1)})
	}
	const dur = 20 * time.Millisecond
	fl, err := Poisson(PoissonParams{Hosts: hosts, CDF: c, Load: 0.6, LinkGbps: 100, Duration: dur, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var bytes float64
	last := time.Duration(-1)
	for _, f := range fl {
		if f.Src == f.Dst || f.Offset < last || f.Offset >= dur {
			t.Fatalf("bad flow %+v", f)
		}
		last = f.Offset
		bytes += float64(f.Bytes)
		if moved := f.MsgSize * f.Iterations(); moved < f.Bytes || moved >= f.Bytes+f.Iterations() {
			t.Errorf("flow of %d B moves %d B", f.Bytes, moved)
		}
	}
	load := bytes * 8 / (16 * 100 * float64(dur))
	if math.Abs(load-0.6)/0.6 > 0.05 {
		t.Errorf("offered load %.3f, want 0.6 within 5%%", load)
	}
	again, _ := Poisson(PoissonParams{Hosts: hosts, CDF: c, Load: 0.6, LinkGbps: 100, Duration: dur, Seed: 1})
	if fmt.Sprint(again[:50]) != fmt.Sprint(fl[:50]) {
		t.Error("same seed, different workload")
	}
}

func FuzzParseCDF(f *testing.F) {
	f.Add("0 0\n10000 15\n30000000 100\n")
	f.Add("9000 0\n9000 0.15\n10000 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCDF(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, u := range []float64{0, 0.5, 0.999999} {
			if c.Sample(u) < 1 {
				t.Fatal("sizes are at least 1 byte")
			}
		}
	})
}

func TestCDFByName(t *testing.T) {
	c, err := CDFByName("websearch")
	if err != nil || math.Abs(c.Mean()-1711250) > 1 {
		t.Fatalf("shipped websearch: %v", err)
	}
	if _, err := CDFByName("workloads/fb-hadoop.cdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := CDFByName("nonesuch"); err == nil || !strings.Contains(err.Error(), "shipped: ") {
		t.Fatalf("want a helpful error, got %v", err)
	}
}
