package connectx

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The OFED sysfs tree of ECN/DCQCN settings (hardware-surfaces reference,
// section 2.3): /sys/class/net/<if>/ecn/roce_np and roce_rp, each with
// enable/<prio> files and parameter files, decimal "%d\n". The parameter
// names and ConnectX-5 defaults (copies from RPDefaults and NPDefaults):
var (
	rpDefaults = map[string]int{
		"clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "rpg_time_reset": 300, "rpg_byte_reset": 32767,
		"rpg_threshold": 1, "rpg_max_rate": 0, "rpg_ai_rate": 5, "rpg_hai_rate": 50, "rpg_gd": 11,
		"rpg_min_dec_fac": 50, "rpg_min_rate": 1, "rate_to_set_on_first_cnp": 0, "dce_tcp_g": 1019,
		"dce_tcp_rtt": 1, "rate_reduce_monitor_period": 4, "initial_alpha_value": 1023,
	}
	npDefaults = map[string]int{"min_time_between_cnps": 4, "cnp_dscp": 48, "cnp_802p_prio": 6}
)

// RPDefaults are the reaction-point parameters and their defaults.
func RPDefaults() map[string]int { return copyMap(rpDefaults) }

// NPDefaults are the notification-point parameters and their defaults.
func NPDefaults() map[string]int { return copyMap(npDefaults) }

func copyMap(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ECNDir is the ECN directory of a netdev.
func ECNDir(netdev string) string { return "/sys/class/net/" + netdev + "/ecn" }

// ECNFiles lists, in a fixed order, every file ReadECN reads.
func ECNFiles(netdev string) []string {
	var out []string
	for _, point := range []string{"roce_np", "roce_rp"} {
		for p := 0; p < 8; p++ {
			out = append(out, path.Join(ECNDir(netdev), point, "enable", strconv.Itoa(p)))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(npDefaults)) {
		out = append(out, path.Join(ECNDir(netdev), "roce_np", n))
	}
	for _, n := range slices.Sorted(maps.Keys(rpDefaults)) {
		out = append(out, path.Join(ECNDir(netdev), "roce_rp", n))
	}
	return out
}

// Driver stacks (hardware-surfaces reference, 2.1), told apart by the
// probe `test -d /sys/class/net/<if>/ecn`.
const (
	DriverOFED  = "ofed"  // MLNX_OFED / DOCA-OFED: the sysfs ecn tree
	DriverInbox = "inbox" // upstream mlx5: debugfs cc_params
)

// ECNState is what the files hold, whichever driver stack: parameters by
// their OFED names in both cases.
type ECNState struct {
	Driver               string // DriverOFED or DriverInbox
	Dir                  string // the sysfs ecn directory or the debugfs cc_params one
	NPEnabled, RPEnabled [8]bool
	NP, RP               map[string]int
	// CNPPrioMode is the inbox driver's np_cnp_prio_mode (1: CNPs take the
	// request's priority, not cnp_802p_prio); -1 on OFED or when absent.
	CNPPrioMode int
	// Missing are the parameters ("roce_rp/rpg_max_rate") the host has no
	// file for (an older kernel's debugfs): they can be neither read nor set.
	Missing []string
}

// Has says whether the host has a file for parameter point/name.
func (e *ECNState) Has(point, name string) bool { return !slices.Contains(e.Missing, point+"/"+name) }

// PerPriority says whether ECN can be enabled per priority (OFED only).
func (e *ECNState) PerPriority() bool { return e.Driver == DriverOFED }

// ParamFile is the file of a parameter (OFED point and name).
func (e *ECNState) ParamFile(point, name string) string {
	if e.Driver == DriverInbox {
		return path.Join(e.Dir, debugfsNames[point+"/"+name])
	}
	return path.Join(e.Dir, point, name)
}

// ParseECN reads the output of `cat` over ECNFiles (one value per line, in
// that order).
func ParseECN(netdev, out string) (ECNState, error) {
	st := ECNState{Driver: DriverOFED, Dir: ECNDir(netdev), NP: map[string]int{}, RP: map[string]int{}, CNPPrioMode: -1}
	files := ECNFiles(netdev)
	lines := strings.Fields(out)
	if len(lines) != len(files) {
		return st, fmt.Errorf("ecn sysfs of %s: %d values for %d files (is this an OFED driver?)", netdev, len(lines), len(files))
	}
	for i, f := range files {
		v, err := strconv.Atoi(lines[i])
		if err != nil {
			return st, fmt.Errorf("ecn sysfs %s: %q", f, lines[i])
		}
		rel := strings.TrimPrefix(f, ECNDir(netdev)+"/")
		point, name, _ := strings.Cut(rel, "/")
		if p, ok := strings.CutPrefix(name, "enable/"); ok {
			prio, _ := strconv.Atoi(p)
			if point == "roce_np" {
				st.NPEnabled[prio] = v == 1
			} else {
				st.RPEnabled[prio] = v == 1
			}
			continue
		}
		if point == "roce_np" {
			st.NP[name] = v
		} else {
			st.RP[name] = v
		}
	}
	return st, nil
}
