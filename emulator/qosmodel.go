package emulator

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/labctl/labctl/emulator/netconfd"
)

// validateQoS is the emulated switches' QoS data-model check on commit and
// validate: thresholds and sizes are non-negative integers, and a WRED/ECN
// minimum threshold does not exceed the maximum beside it.
func validateQoS(t *netconfd.Tree) error {
	mins := map[string]int64{}
	maxs := map[string]int64{}
	var err error
	t.Leaves(func(path, value string) {
		if err != nil {
			return
		}
		leaf := path[strings.LastIndexByte(path, '/')+1:]
		if !strings.Contains(leaf, "threshold") && !strings.HasSuffix(leaf, "-cells") && !strings.HasSuffix(leaf, "-bytes") {
			return
		}
		v, perr := strconv.ParseInt(value, 10, 64)
		if perr != nil || v < 0 {
			err = fmt.Errorf("%s: %q is not a non-negative integer", path, value)
			return
		}
		parent := path[:strings.LastIndexByte(path, '/')+1]
		switch leaf {
		case "min-threshold":
			mins[parent] = v
		case "max-threshold":
			maxs[parent] = v
		}
	})
	if err != nil {
		return err
	}
	for p, lo := range mins {
		if hi, ok := maxs[p]; ok && lo > hi {
			return fmt.Errorf("%smin-threshold %d exceeds max-threshold %d", p, lo, hi)
		}
	}
	return nil
}
