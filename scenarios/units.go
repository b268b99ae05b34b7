package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteUnits maps suffixes to multipliers. Binary (KiB) and decimal (KB)
// units are both accepted because lab notes use both; a bare number is bytes.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, // perftest's -s suffixes
	{"B", 1},
}

// ParseBytes parses sizes such as "1MiB", "64KiB", "4096" or "1.5MB".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult, t = u.mult, strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	// NaN and infinities parse as floats; they and sizes past int64 are
	// refused, not wrapped into a negative or arbitrary count.
	if err != nil || math.IsNaN(v) || v < 0 || v*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("bad size %q (want e.g. 4096, 64KiB, 1MiB, 1.5MB)", s)
	}
	return int64(v * float64(mult)), nil
}
