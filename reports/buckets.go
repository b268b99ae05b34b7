package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DefaultBuckets are the papers' flow-size bins: <100KB, 100KB-1MB, >=1MB.
func DefaultBuckets() []int64 { return []int64{100_000, 1_000_000} }

// sizeUnits are the suffixes ParseBuckets knows, longest first so that
// "KiB" is not read as "B". KB, MB, GB are decimal, as the papers' bins.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}

// ParseBuckets reads size-bucket edges such as "100KB,1MB" (the --buckets
// flag): ascending positive sizes, each a whole number of bytes with an
// optional unit (B, KB/MB/GB = 10^3/10^6/10^9, KiB/MiB/GiB = 2^10/2^20/2^30,
// case-insensitive). n edges make n+1 buckets.
func ParseBuckets(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("size buckets %q: want sizes such as 100KB,1MB", s)
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := parseSize(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("size buckets %q: %w", s, err)
		}
		out = append(out, v)
	}
	if err := checkBuckets(out); err != nil {
		return nil, fmt.Errorf("size buckets %q: %w", s, err)
	}
	return out, nil
}

func parseSize(f string) (int64, error) {
	num, mult := strings.ToLower(f), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size", f)
	}
	if v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", f)
	}
	return v * mult, nil
}

func checkBuckets(edges []int64) error {
	for i, b := range edges {
		if b <= 0 || (i > 0 && b <= edges[i-1]) {
			return fmt.Errorf("edges %v: want ascending positive sizes", edges)
		}
	}
	return nil
}

func bucketOf(size int64, edges []int64) int {
	return sort.Search(len(edges), func(i int) bool { return size < edges[i] })
}

// sizeName prints a size with the largest unit that divides it.
func sizeName(b int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"GB", 1e9}, {"GiB", 1 << 30}, {"MB", 1e6}, {"MiB", 1 << 20}, {"KB", 1e3}, {"KiB", 1 << 10}} {
		if b%u.mult == 0 {
			return fmt.Sprintf("%d%s", b/u.mult, u.name)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// bucketName names bucket i of the edges: "<100KB", "100KB-1MB", ">=1MB".
func bucketName(i int, edges []int64) string {
	switch {
	case len(edges) == 0:
		return "all"
	case i == 0:
		return "<" + sizeName(edges[0])
	case i == len(edges):
		return ">=" + sizeName(edges[i-1])
	}
	return sizeName(edges[i-1]) + "-" + sizeName(edges[i])
}
