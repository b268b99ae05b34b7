package reports

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestBinLow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ size, lo int64 }{
		{1, 1}, {2, 1}, {3, 3}, {9, 3}, {10, 10}, {999, 300}, {1000, 1000}, {2999, 1000}, {3000, 3000},
		{50_000, 30_000}, {100_000, 100_000}, {2_000_000, 1_000_000}, {29_999_999, 10_000_000},
	} {
		if got := binLow(tc.size); got != tc.lo {
			t.Errorf("binLow(%d) = %d, want %d", tc.size, got, tc.lo)
		}
	}
}

// Bins of several repetitions merge into the slowdowns of all their
// flows: count, mean and p99 as if added to one bin.
func TestSizeBinsMerge(t *testing.T) {
	t.Parallel()
	a, b, one := sizeBins{}, sizeBins{}, sizeBins{}
	for i := int64(1); i <= 100; i++ {
		into := a
		if i%3 == 0 {
			into = b
		}
		into.add(50_000, 1000*i, 1000) // slowdown i
		one.add(50_000, 1000*i, 1000)
	}
	b.add(5_000, 2000, 1000)
	m := sizeBins{}
	m.merge(a.list())
	m.merge(b.list())
	got, want := m.list(), one.list()
	if len(got) != 2 || got[0].Lo != 3000 || got[0].Flows() != 1 || got[1].Lo != 30_000 || got[1].Flows() != 100 {
		t.Fatalf("merged bins %+v", got)
	}
	if got[1].mean() != 50.5 || got[1].mean() != want[0].mean() || got[1].p99() != want[0].p99() || got[1].p99() < 99 || got[1].p99() > 100 {
		t.Errorf("merged mean %v p99 %v, one bin's %v %v", got[1].mean(), got[1].p99(), want[0].mean(), want[0].p99())
	}
}

// The slowdown-by-size plot bins the matrix's flows (50 KB, 500 KB,
// 2 MB) where they are, not in the summary's buckets (<100KB, 100KB-1MB,
// >=1MB): 30KB-300KB (100KB-300KB holds none and is merged in), 300KB-1MB
// and >=1MB, each with its flows over the condition's two schemes and two
// repetitions.
func TestSlowdownBySizeBinsHoldData(t *testing.T) {
	s := analyseMatrix(t, Analyser{})
	var b bytes.Buffer
	if err := WriteHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	i := strings.Index(h, "FCT slowdown by flow size (load=0.5 workload=websearch)")
	if i < 0 {
		t.Fatal("no slowdown-by-size plot for load 0.5")
	}
	svg := h[strings.LastIndex(h[:i], "<svg"):]
	svg = svg[:strings.Index(svg, "</svg>")]
	var labels []string
	for _, m := range regexp.MustCompile(`>([^<>]*(?:B|n=)[0-9]*)<`).FindAllStringSubmatch(svg, -1) {
		labels = append(labels, m[1])
	}
	if got, want := strings.Join(labels, " "), "30KB n=20 300KB n=12 &gt;=1MB n=8"; got != want {
		t.Errorf("x labels %q, want %q", got, want)
	}
}
