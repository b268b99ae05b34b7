package switchqos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Problem is one thing wrong with a configuration. Field is the path of the
// value in the switch profile's YAML (e.g. "ecn.3.kmin_bytes"), so a
// profile loader can point at its line and a device can name it in an error.
type Problem struct{ Field, Msg string }

func (p Problem) String() string { return p.Field + ": " + p.Msg }

// MaxWeight is the largest DWRR weight (Tofino's queue dwrr_weight is a
// 10-bit quantity in practice; UNCERTAIN for other ASICs).
const MaxWeight = 1023

// Check lists what a device would refuse in c. bufferBytes is the switch's
// whole packet buffer; pools must fit in it (0: not checked).
func (c Config) Check(bufferBytes int64) []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{field, fmt.Sprintf(format, args...)})
	}
	if c.XoffBytes < 0 || c.XonBytes < 0 {
		add("xoff_bytes", "thresholds must not be negative")
	}
	if c.XonBytes > c.XoffBytes {
		add("xon_bytes", "%d is above xoff_bytes %d (the switch resumes below where it pauses)", c.XonBytes, c.XoffBytes)
	}
	if c.Alpha != 0 {
		if c.XoffBytes != 0 || c.XonBytes != 0 {
			add("pfc_alpha", "give either pfc_alpha (dynamic threshold) or xoff_bytes/xon_bytes (static), not both")
		}
		if !slices.Contains(Alphas, c.Alpha) {
			add("pfc_alpha", "%s is not one of %s", FormatAlpha(c.Alpha), alphaList())
		}
	}
	if c.HeadroomBytes < 0 {
		add("headroom_bytes", "%d is negative", c.HeadroomBytes)
	}
	var total int64
	for _, name := range slices.Sorted(maps.Keys(c.Pools)) {
		v := c.Pools[name]
		if name != PoolLossless && name != PoolLossy {
			add("buffer_pools."+name, "unknown pool (want %s or %s)", PoolLossless, PoolLossy)
		}
		if v <= 0 {
			add("buffer_pools."+name, "size %d must be positive", v)
		}
		total += v
	}
	if bufferBytes > 0 && total > bufferBytes {
		add("buffer_pools", "pools of %d bytes do not fit the switch's %d-byte buffer", total, bufferBytes)
	}
	// in says whether v is in lo..hi, and adds the problem if not.
	in := func(f string, v, lo, hi int, what string) bool {
		if v < lo || v > hi {
			add(f, what, v)
			return false
		}
		return true
	}
	queue := func(f string, q int) bool { return in(f, q, 0, 7, "queue %d is not a queue (0..7)") }
	for _, q := range slices.Sorted(maps.Keys(c.ECN)) {
		e := c.ECN[q]
		f := fmt.Sprintf("ecn.%d", q)
		if !queue(f, q) {
			continue
		}
		if e.KminBytes < 0 {
			add(f+".kmin_bytes", "%d is negative", e.KminBytes)
		}
		if e.KmaxBytes < 0 {
			add(f+".kmax_bytes", "%d is negative", e.KmaxBytes)
		}
		if e.KminBytes > e.KmaxBytes {
			add(f+".kmin_bytes", "kmin_bytes %d exceeds kmax_bytes %d", e.KminBytes, e.KmaxBytes)
		}
		if e.PmaxPercent < 0 || e.PmaxPercent > 100 {
			add(f+".pmax_percent", "%d is not a percentage (0..100)", e.PmaxPercent)
		}
	}
	dscp := func(f string, d int) bool { return in(f, d, 0, 63, "%d is not a DSCP (0..63)") }
	for _, d := range slices.Sorted(maps.Keys(c.DSCP)) {
		tc := c.DSCP[d]
		if f := fmt.Sprintf("dscp_to_tc.%d", d); dscp(f, d) && (tc < 0 || tc > 7) {
			add(f, "traffic class %d is not 0..7", tc)
		}
	}
	for _, q := range c.Remove.ECN {
		queue(fmt.Sprintf("ecn.%d", q), q)
	}
	for _, d := range c.Remove.DSCP {
		dscp(fmt.Sprintf("dscp_to_tc.%d", d), d)
	}
	for _, name := range c.Remove.Pools {
		if name != PoolLossless && name != PoolLossy {
			add("buffer_pools."+name, "unknown pool (want %s or %s)", PoolLossless, PoolLossy)
		}
	}
	switch c.Scheduler {
	case "", Strict, DWRR:
	default:
		add("scheduler", "%q: want %s or %s", c.Scheduler, Strict, DWRR)
	}
	if len(c.Weights) > 0 && c.Scheduler != DWRR {
		add("dwrr_weights", "weights need scheduler: %s", DWRR)
	}
	for _, q := range slices.Sorted(maps.Keys(c.Weights)) {
		w := c.Weights[q]
		if q < 0 || q > 7 {
			add(fmt.Sprintf("dwrr_weights.%d", q), "queue %d is not a queue (0..7)", q)
		} else if w < 1 || w > MaxWeight {
			add(fmt.Sprintf("dwrr_weights.%d", q), "weight %d is not 1..%d", w, MaxWeight)
		}
	}
	return ps
}

func alphaList() string {
	s := make([]string, len(Alphas))
	for i, a := range Alphas {
		s[i] = FormatAlpha(a)
	}
	return strings.Join(s, ", ")
}

// MergePorts diffs every port's configuration against want and folds the
// per-port differences into one list: a setting that differs the same way
// on every port is one Setting without Ports; otherwise each distinct
// (field, from) lists the ports it was seen on. So a changed value is one
// Setting per switch, and drift on a single port still shows, naming it.
func MergePorts(ports []string, have map[string]Config, want Config) []Setting {
	type key struct{ field, from, to string }
	var order []key
	seen := map[key][]string{}
	for _, p := range ports {
		for _, s := range Diff(have[p], want) {
			k := key{s.Field, s.From, s.To}
			if _, ok := seen[k]; !ok {
				order = append(order, k)
			}
			seen[k] = append(seen[k], p)
		}
	}
	// Back into Diff's order (ports may differ in which fields they list).
	slices.SortStableFunc(order, func(a, b key) int { return compareFields(a.field, b.field) })
	out := make([]Setting, 0, len(order))
	for _, k := range order {
		s := Setting{Field: k.field, From: k.from, To: k.to}
		if ps := seen[k]; len(ps) != len(ports) {
			s.Ports = ps
		}
		out = append(out, s)
	}
	return out
}

// fieldKinds is the order in which Diff lists fields.
var fieldKinds = []string{"priority[", "xoff_bytes", "xon_bytes", "pfc_alpha", "headroom_bytes", "pool[", "dscp[", "scheduler", ".dwrr_weight", ".ecn."}

func compareFields(a, b string) int {
	rank := func(f string) (int, int) {
		kind := len(fieldKinds)
		for i, k := range fieldKinds {
			if strings.HasPrefix(f, k) || (strings.HasPrefix(k, ".") && strings.Contains(f, k)) {
				kind = i
				break
			}
		}
		n := 0
		if i := strings.IndexByte(f, '['); i >= 0 {
			_, _ = fmt.Sscanf(f[i+1:], "%d", &n)
		}
		return kind, n
	}
	ka, na := rank(a)
	kb, nb := rank(b)
	if ka != kb {
		return ka - kb
	}
	return na - nb // then first seen, which is Diff's order for one port
}
