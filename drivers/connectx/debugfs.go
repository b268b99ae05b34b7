package connectx

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The upstream (inbox) mlx5 driver has no /sys/class/net/<if>/ecn tree: its
// DCQCN parameters are debugfs files /sys/kernel/debug/mlx5/<pci>/cc_params/
// (hardware-surfaces reference, section 2.3), decimal "%d\n", named rp_* and
// np_*. Older kernels lack some of them (rp_max_rate and
// np_min_time_between_cnps came later), so ReadState reads the files that
// exist (parseCat) and notes the parameters a host cannot take.
// There is no per-priority enable there: DCQCN runs on the priorities of
// the firmware's ROCE_CC_PRIO_MASK (default all). Profiles name parameters
// by their OFED sysfs names; debugfsNames maps them.

// DebugfsDir is the cc_params directory of the RNIC at a PCI address.
func DebugfsDir(pci string) string { return "/sys/kernel/debug/mlx5/" + pci + "/cc_params" }

// debugfsNames maps OFED names (point/name) to debugfs file names.
var debugfsNames = map[string]string{
	"roce_rp/clamp_tgt_rate":                "rp_clamp_tgt_rate",
	"roce_rp/clamp_tgt_rate_after_time_inc": "rp_clamp_tgt_rate_ati",
	"roce_rp/rpg_time_reset":                "rp_time_reset",
	"roce_rp/rpg_byte_reset":                "rp_byte_reset",
	"roce_rp/rpg_threshold":                 "rp_threshold",
	"roce_rp/rpg_ai_rate":                   "rp_ai_rate",
	"roce_rp/rpg_max_rate":                  "rp_max_rate",
	"roce_rp/rpg_hai_rate":                  "rp_hai_rate",
	"roce_rp/rpg_min_dec_fac":               "rp_min_dec_fac",
	"roce_rp/rpg_min_rate":                  "rp_min_rate",
	"roce_rp/rate_to_set_on_first_cnp":      "rp_rate_to_set_on_first_cnp",
	"roce_rp/dce_tcp_g":                     "rp_dce_tcp_g",
	"roce_rp/dce_tcp_rtt":                   "rp_dce_tcp_rtt",
	"roce_rp/rate_reduce_monitor_period":    "rp_rate_reduce_monitor_period",
	"roce_rp/initial_alpha_value":           "rp_initial_alpha_value",
	"roce_rp/rpg_gd":                        "rp_gd",
	"roce_np/min_time_between_cnps":         "np_min_time_between_cnps",
	"roce_np/cnp_dscp":                      "np_cnp_dscp",
	"roce_np/cnp_802p_prio":                 "np_cnp_prio",
}

// cnpPrioMode is the debugfs file that says where a CNP's priority comes
// from: 0 np_cnp_prio, 1 the request's. Writing np_cnp_prio sets it to 0.
const cnpPrioMode = "np_cnp_prio_mode"

// DebugfsFiles lists, in a fixed order, the cc_params files ReadState reads.
func DebugfsFiles() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(debugfsNames)) {
		out = append(out, debugfsNames[k])
	}
	return append(out, cnpPrioMode)
}

// DebugfsDefaults are the files' values on a ConnectX out of the box (the
// same defaults as OFED's; np_cnp_prio_mode 0 is UNCERTAIN per firmware).
func DebugfsDefaults() map[string]int {
	out := map[string]int{cnpPrioMode: 0}
	for k, f := range debugfsNames {
		point, name, _ := strings.Cut(k, "/")
		if point == "roce_rp" {
			out[f] = rpDefaults[name]
		} else {
			out[f] = npDefaults[name]
		}
	}
	return out
}

// OFEDName is the OFED point and parameter name of a debugfs file.
func OFEDName(file string) (point, name string, ok bool) {
	for k, f := range debugfsNames {
		if f == file {
			point, name, _ = strings.Cut(k, "/")
			return point, name, true
		}
	}
	return "", "", false
}

// DebugfsPaths are DebugfsFiles in dir.
func DebugfsPaths(dir string) []string {
	files := DebugfsFiles()
	for i := range files {
		files[i] = path.Join(dir, files[i])
	}
	return files
}

// ParseDebugfs reads the output of `cat` over DebugfsPaths(dir): stdout
// the values of the files that exist, stderr cat's complaints about those
// that do not (an older kernel's). The parameters without a file are
// listed in Missing.
func ParseDebugfs(dir, stdout, stderr string) (ECNState, error) {
	st := ECNState{Driver: DriverInbox, NP: map[string]int{}, RP: map[string]int{}, Dir: dir, CNPPrioMode: -1}
	vals, err := parseCat("debugfs "+dir, DebugfsPaths(dir), stdout, stderr)
	if err != nil {
		return st, err
	}
	if len(vals) == 0 {
		return st, fmt.Errorf("debugfs %s: no cc_params files (is debugfs mounted at /sys/kernel/debug?)", dir)
	}
	for _, f := range DebugfsFiles() {
		s, ok := vals[path.Join(dir, f)]
		point, name, _ := OFEDName(f)
		if !ok {
			if f != cnpPrioMode {
				st.Missing = append(st.Missing, point+"/"+name)
			}
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return st, fmt.Errorf("debugfs %s: %q", path.Join(dir, f), s)
		}
		switch {
		case f == cnpPrioMode:
			st.CNPPrioMode = v
		case point == "roce_rp":
			st.RP[name] = v
		default:
			st.NP[name] = v
		}
	}
	return st, nil
}

// ParsePCILink reads `readlink /sys/class/net/<if>/device`
// ("../../../0000:04:00.0") into the PCI address.
func ParsePCILink(out string) (string, error) {
	pci := path.Base(strings.TrimSpace(out))
	parts := strings.Split(pci, ":")
	if len(parts) != 3 || !strings.Contains(parts[2], ".") {
		return "", fmt.Errorf("readlink: %q is not a PCI device link", strings.TrimSpace(out))
	}
	return pci, nil
}
