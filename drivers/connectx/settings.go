package connectx

import (
	"fmt"
	"strconv"
	"strings"
)

// The set options of mlnx_qos and the cma_roce_* scripts, with the tools'
// own error texts (mlnx-tools), shared by the driver that writes them and
// the emulator that answers them.

// FormatPFCList is mlnx_qos's --pfc value: 8 comma-separated 0/1, priority 0 first.
func FormatPFCList(on [8]bool) string {
	v := make([]string, 8)
	for i, b := range on {
		v[i] = "0"
		if b {
			v[i] = "1"
		}
	}
	return strings.Join(v, ",")
}

// ParsePFCList reads a --pfc value as mlnx_qos does.
func ParsePFCList(s string) ([8]bool, error) {
	var on [8]bool
	items := strings.Split(s, ",")
	switch {
	case len(items) > 8:
		return on, fmt.Errorf("Too many items for PFC")
	case len(items) != 8:
		return on, fmt.Errorf("pfc list must have 8 items")
	}
	for i, it := range items {
		switch strings.TrimSpace(it) {
		case "0":
		case "1":
			on[i] = true
		default:
			return on, fmt.Errorf("Bad value for PFC: %s", it)
		}
	}
	return on, nil
}

// ValidTrust checks a --trust value.
func ValidTrust(s string) error {
	if s != "pcp" && s != "dscp" {
		return fmt.Errorf("Invalid trust state command. Refer to the help.")
	}
	return nil
}

// RoCEModeText is what cma_roce_mode prints for a mode.
func RoCEModeText(mode int) string {
	if mode == 1 {
		return "IB/RoCE v1"
	}
	return "RoCE v2"
}

// ParseRoCEMode reads cma_roce_mode's output.
func ParseRoCEMode(out string) (int, error) {
	switch strings.TrimSpace(out) {
	case "RoCE v2":
		return 2, nil
	case "IB/RoCE v1":
		return 1, nil
	}
	return 0, fmt.Errorf("cma_roce_mode: unexpected output %q", strings.TrimSpace(out))
}

// ParseRoCETOS reads cma_roce_tos's output.
func ParseRoCETOS(out string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || v < 0 || v > 255 {
		return 0, fmt.Errorf("cma_roce_tos: unexpected output %q", strings.TrimSpace(out))
	}
	return v, nil
}

// FormatIntList is an 8-item option value of mlnx_qos (--prio2buffer,
// --buffer_size): comma-separated integers.
func FormatIntList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ParseIntList reads an 8-item mlnx_qos list of non-negative integers no
// larger than max. The tool's own messages for these options are not in
// the public reference (UNCERTAIN); these follow the --pfc ones.
func ParseIntList(what, s string, max int) ([8]int, error) {
	var v [8]int
	items := strings.Split(s, ",")
	if len(items) != 8 {
		return v, fmt.Errorf("%s list must have 8 items", what)
	}
	for i, it := range items {
		x, err := strconv.Atoi(strings.TrimSpace(it))
		if err != nil || x < 0 || x > max {
			return v, fmt.Errorf("Bad value for %s: %s", what, it)
		}
		v[i] = x
	}
	return v, nil
}

// ParseDSCP2Prio reads one --dscp2prio value: set,DSCP,PRIO | del,DSCP,PRIO
// | flush.
func ParseDSCP2Prio(s string) (op string, dscp, prio int, err error) {
	if s == "flush" {
		return "flush", 0, 0, nil
	}
	f := strings.Split(s, ",")
	if len(f) == 3 && (f[0] == "set" || f[0] == "del") {
		d, err1 := strconv.Atoi(f[1])
		p, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && d >= 0 && d <= 63 && p >= 0 && p <= 7 {
			return f[0], d, p, nil
		}
	}
	return "", 0, 0, fmt.Errorf("Invalid dscp2prio command: %s. Refer to the help.", s)
}
