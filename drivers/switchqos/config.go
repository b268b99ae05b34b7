package switchqos

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Config is a switch's QoS settings. Switches apply one configuration to
// every port. Fields a profile leaves at their zero value (nil maps, an
// empty Scheduler, zero HeadroomBytes) are not managed: Diff ignores them.
// The PFC vector and the PFC thresholds (XoffBytes, XonBytes, Alpha) are
// always managed.
type Config struct {
	// PFC marks the lossless priorities: PFC on and no drop.
	PFC [8]bool `json:"pfc"`
	// Static PFC thresholds of the lossless priority group (XOFF where the
	// switch pauses its upstream, XON where it resumes), or Alpha > 0 for a
	// dynamic threshold: XOFF = Alpha x free shared buffer. One or the
	// other; with Alpha the static thresholds are 0.
	XoffBytes int64   `json:"xoff_bytes"`
	XonBytes  int64   `json:"xon_bytes"`
	Alpha     float64 `json:"pfc_alpha"`
	// HeadroomBytes is the buffer reserved per port and lossless priority
	// group for what arrives after a PAUSE is sent.
	HeadroomBytes int64 `json:"headroom_bytes,omitempty"`
	// Pools sizes the shared buffer pools by name (Pool*).
	Pools map[string]int64 `json:"buffer_pools,omitempty"`
	// ECN is RED/ECN marking per egress queue (= traffic class).
	ECN map[int]ECN `json:"ecn,omitempty"`
	// DSCP maps DSCP code points to traffic classes.
	DSCP map[int]int `json:"dscp_to_tc,omitempty"`
	// Scheduler among a port's queues: strict (higher queue first) or dwrr
	// with Weights per queue.
	Scheduler string      `json:"scheduler,omitempty"`
	Weights   map[int]int `json:"dwrr_weights,omitempty"`
	// Remove lists entries the device must not have (a profile's `off`);
	// a configuration read from a device never has any.
	Remove Removal `json:"remove"`
}

// Removal is what a configuration takes away: the ECN marking of queues,
// DSCP code points' classes, buffer pools. On a device without a way to
// delete a pool (Tofino's pools always exist), a removed pool has size 0.
type Removal struct {
	ECN   []int    `json:"ecn,omitempty"`
	DSCP  []int    `json:"dscp,omitempty"`
	Pools []string `json:"pools,omitempty"`
}

// Within is r restricted to the entries have holds: what a device that
// refuses to delete what it does not have must be sent.
func (r Removal) Within(have Config) Removal {
	var out Removal
	for _, q := range r.ECN {
		if _, ok := have.ECN[q]; ok {
			out.ECN = append(out.ECN, q)
		}
	}
	for _, d := range r.DSCP {
		if _, ok := have.DSCP[d]; ok {
			out.DSCP = append(out.DSCP, d)
		}
	}
	for _, p := range r.Pools {
		if _, ok := have.Pools[p]; ok {
			out.Pools = append(out.Pools, p)
		}
	}
	return out
}

// ECN is one queue's marking: probability 0 below Kmin, rising linearly to
// Pmax at Kmax, every ECT packet above.
type ECN struct {
	KminBytes   int64 `json:"kmin_bytes" yaml:"kmin_bytes"`
	KmaxBytes   int64 `json:"kmax_bytes" yaml:"kmax_bytes"`
	PmaxPercent int   `json:"pmax_percent" yaml:"pmax_percent"`
}

// Buffer pool names: the pool lossless priority groups and queues draw
// from, and the pool of everything else.
const (
	PoolLossless = "lossless"
	PoolLossy    = "lossy"
)

// Schedulers.
const (
	Strict = "strict"
	DWRR   = "dwrr"
)

// Alphas are the dynamic-threshold factors a profile may ask for: the
// powers of two from 1/64 to 4 that shared-buffer ASICs offer (on Tofino
// the burst absorption factors 1.5% .. 80%, alpha/(1+alpha) of the free
// buffer).
var Alphas = []float64{1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1, 2, 4}

// Setting is one difference between two configurations: the field, what a
// device has and what is wanted, as text.
type Setting struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
	// Ports lists the ports that differ when not all of a switch's ports
	// do (drivers that read ports one by one); empty means every port.
	Ports []string `json:"ports,omitempty"`
}

// Diff lists, in a stable order, every managed setting of want that have
// does not match; one value changed in want is one Setting. An entry want
// removes that have still holds differs with To "none".
func Diff(have, want Config) []Setting {
	var out []Setting
	add := func(field, from, to string) {
		if from != to {
			out = append(out, Setting{Field: field, From: from, To: to})
		}
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for p := 0; p < 8; p++ {
		add(fmt.Sprintf("priority[%d].pfc", p), strconv.FormatBool(have.PFC[p]), strconv.FormatBool(want.PFC[p]))
	}
	add("xoff_bytes", i64(have.XoffBytes), i64(want.XoffBytes))
	add("xon_bytes", i64(have.XonBytes), i64(want.XonBytes))
	add("pfc_alpha", FormatAlpha(have.Alpha), FormatAlpha(want.Alpha))
	if want.HeadroomBytes > 0 {
		add("headroom_bytes", i64(have.HeadroomBytes), i64(want.HeadroomBytes))
	}
	for _, name := range slices.Sorted(maps.Keys(want.Pools)) {
		add("pool["+name+"].bytes", lookup(have.Pools, name, i64), i64(want.Pools[name]))
	}
	for _, name := range slices.Sorted(slices.Values(want.Remove.Pools)) {
		add("pool["+name+"].bytes", lookup(have.Pools, name, i64), "none")
	}
	dscp := func(d int) string { return fmt.Sprintf("dscp[%d].tc", d) }
	for _, d := range slices.Sorted(maps.Keys(want.DSCP)) {
		add(dscp(d), lookup(have.DSCP, d, strconv.Itoa), strconv.Itoa(want.DSCP[d]))
	}
	for _, d := range slices.Sorted(slices.Values(want.Remove.DSCP)) {
		add(dscp(d), lookup(have.DSCP, d, strconv.Itoa), "none")
	}
	if want.Scheduler != "" {
		add("scheduler", orNone(have.Scheduler), want.Scheduler)
	}
	if want.Scheduler == DWRR {
		for _, q := range slices.Sorted(maps.Keys(want.Weights)) {
			add(fmt.Sprintf("queue[%d].dwrr_weight", q), lookup(have.Weights, q, strconv.Itoa), strconv.Itoa(want.Weights[q]))
		}
	}
	for _, q := range slices.Sorted(maps.Keys(want.ECN)) {
		h, ok := have.ECN[q]
		w := want.ECN[q]
		f := fmt.Sprintf("queue[%d].ecn.", q)
		if !ok {
			add(f+"kmin_bytes", "none", i64(w.KminBytes))
			add(f+"kmax_bytes", "none", i64(w.KmaxBytes))
			add(f+"pmax_percent", "none", strconv.Itoa(w.PmaxPercent))
			continue
		}
		add(f+"kmin_bytes", i64(h.KminBytes), i64(w.KminBytes))
		add(f+"kmax_bytes", i64(h.KmaxBytes), i64(w.KmaxBytes))
		add(f+"pmax_percent", strconv.Itoa(h.PmaxPercent), strconv.Itoa(w.PmaxPercent))
	}
	for _, q := range slices.Sorted(slices.Values(want.Remove.ECN)) {
		if h, ok := have.ECN[q]; ok {
			f := fmt.Sprintf("queue[%d].ecn.", q)
			add(f+"kmin_bytes", i64(h.KminBytes), "none")
			add(f+"kmax_bytes", i64(h.KmaxBytes), "none")
			add(f+"pmax_percent", strconv.Itoa(h.PmaxPercent), "none")
		}
	}
	return out
}

// Unnamed lists the entries have holds in the tables want manages (ECN,
// DSCP, pools: want sets or removes some of their entries) that want
// neither sets nor removes: old settings a profile leaves in place. Each
// is one Setting with the device's value and To "unnamed"; Diff does not
// count them, a plan notes them.
func Unnamed(have, want Config) []Setting {
	var out []Setting
	note := func(field, from string) { out = append(out, Setting{Field: field, From: from, To: "unnamed"}) }
	if len(want.Pools) > 0 || len(want.Remove.Pools) > 0 {
		for _, name := range slices.Sorted(maps.Keys(have.Pools)) {
			if _, ok := want.Pools[name]; !ok && !slices.Contains(want.Remove.Pools, name) {
				note("pool["+name+"].bytes", strconv.FormatInt(have.Pools[name], 10))
			}
		}
	}
	if len(want.DSCP) > 0 || len(want.Remove.DSCP) > 0 {
		for _, d := range slices.Sorted(maps.Keys(have.DSCP)) {
			if _, ok := want.DSCP[d]; !ok && !slices.Contains(want.Remove.DSCP, d) {
				note(fmt.Sprintf("dscp[%d].tc", d), strconv.Itoa(have.DSCP[d]))
			}
		}
	}
	if len(want.ECN) > 0 || len(want.Remove.ECN) > 0 {
		for _, q := range slices.Sorted(maps.Keys(have.ECN)) {
			if _, ok := want.ECN[q]; !ok && !slices.Contains(want.Remove.ECN, q) {
				e := have.ECN[q]
				note(fmt.Sprintf("queue[%d].ecn", q), fmt.Sprintf("kmin_bytes %d, kmax_bytes %d, pmax_percent %d", e.KminBytes, e.KmaxBytes, e.PmaxPercent))
			}
		}
	}
	return out
}

// FormatAlpha prints an alpha the way Diff and the drivers do ("0" for
// none, else the shortest exact decimal, e.g. "0.125").
func FormatAlpha(a float64) string { return strconv.FormatFloat(a, 'g', -1, 64) }

func lookup[K comparable, V any](m map[K]V, k K, f func(V) string) string {
	if v, ok := m[k]; ok {
		return f(v)
	}
	return "none"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Quantize rounds every byte amount up to a whole number of cells, which
// is what a device that counts its buffer in cells keeps (Tofino: 80 B).
// Diffing a quantized want against what such a device reads back does not
// report a difference the device cannot represent.
func (c Config) Quantize(cell int64) Config {
	if cell <= 1 {
		return c
	}
	up := func(v int64) int64 { return (v + cell - 1) / cell * cell }
	q := c
	q.XoffBytes, q.XonBytes, q.HeadroomBytes = up(c.XoffBytes), up(c.XonBytes), up(c.HeadroomBytes)
	if c.Pools != nil {
		q.Pools = map[string]int64{}
		for k, v := range c.Pools {
			q.Pools[k] = up(v)
		}
	}
	if c.ECN != nil {
		q.ECN = map[int]ECN{}
		for k, e := range c.ECN {
			q.ECN[k] = ECN{KminBytes: up(e.KminBytes), KmaxBytes: up(e.KmaxBytes), PmaxPercent: e.PmaxPercent}
		}
	}
	return q
}

// PFCMask is the lossless priorities as a bit mask (bit p = priority p).
func (c Config) PFCMask() uint8 {
	var m uint8
	for p, on := range c.PFC {
		if on {
			m |= 1 << p
		}
	}
	return m
}
