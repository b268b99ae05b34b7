package emulator

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/netconfd"
)

// switchBufferBytes is an emulated switch's packet buffer: the twin's.
func switchBufferBytes() int64 { return fabric.DefaultConfig().BufferBytes }

// validateQoS is the emulated switches' data-model check on commit and
// validate. Any model: thresholds and sizes are non-negative integers, and a
// WRED/ECN minimum threshold does not exceed the maximum beside it.
// labctl's QoS model (urn:labctl:qos) must in addition pass the checks a
// switch profile passes (kmin <= kmax, weights 1..1023 with dwrr, alpha one
// of the dynamic-threshold steps, pools that fit the buffer, ...).
func validateQoS(t *netconfd.Tree) error {
	if err := validateLeaves(t); err != nil {
		return err
	}
	xml := t.XML()
	if !strings.Contains(xml, netconf.QoSNamespace) {
		return nil
	}
	q, err := netconf.ParseQoS(xml)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range q.Check(switchBufferBytes()) {
		errs = append(errs, errors.New("qos: "+p.String()))
	}
	return errors.Join(errs...)
}

func validateLeaves(t *netconfd.Tree) error {
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
