package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/perftest"
)

// pattern is one traffic pattern as scenarios know it: the fields it takes,
// how to check them and how to plan it. The registry (patternRegistry) is
// the one list of patterns: the schema, the planner, `labctl run --help`
// and the documentation tests all read it.
type pattern struct {
	Name    string
	Summary string
	// Fields are the traffic fields the pattern takes besides the common
	// ones (name, pattern, tool, msg_size, qps, host_list).
	Fields []string
	check  func(c *checker, t Traffic)
	plan   func(pc *planCtx, t Traffic, pt *Point) error
}

// Pattern names.
const (
	PatternIncast      = "incast"
	PatternAllReduce   = "allreduce"
	PatternWorkload    = "workload"
	PatternPermutation = "permutation"
	PatternBurst       = "burst"
)

func patternRegistry() []pattern {
	return []pattern{
		{Name: PatternIncast, Summary: "senders write bytes each to one receiver, all at once",
			Fields: []string{"senders", "receiver", "bytes", "spread"}, check: checkIncast, plan: planIncast},
		{Name: PatternAllReduce, Summary: "ring all-reduce of a buffer over hosts: 2(N-1) dependent steps",
			Fields: []string{"hosts", "buffer", "steps"}, check: checkAllReduce, plan: planAllReduce},
		{Name: PatternWorkload, Summary: "flow sizes from a CDF, Poisson arrivals at a load of each host's link, random or permutation pairs",
			Fields: []string{"hosts", "cdf", "load", "load_basis", "duration", "pairing", "intra_rack", "seed"}, check: checkWorkload, plan: planWorkload},
		{Name: PatternPermutation, Summary: "every host sends one flow (bytes, or a size from a CDF) to a random partner; no host to itself",
			Fields: []string{"hosts", "bytes", "cdf", "seed"}, check: checkPermutation, plan: planPermutation},
		{Name: PatternBurst, Summary: "long background flows, then synchronized bursts of short flows to one receiver (FLB's HoL-blocking test)",
			Fields: []string{"receiver", "senders", "bytes", "background", "background_bytes", "bursts", "interval", "start"},
			check:  checkBurst, plan: planBurst},
	}
}

// PatternNames lists the traffic patterns, in registry order.
func PatternNames() []string {
	var out []string
	for _, p := range patternRegistry() {
		out = append(out, p.Name)
	}
	return out
}

// PatternHelp is one line per pattern: name, what it does, its fields.
func PatternHelp() string {
	var b strings.Builder
	for _, p := range patternRegistry() {
		fmt.Fprintf(&b, "  %-12s %s\n  %-12s fields: %s\n", p.Name, p.Summary, "", strings.Join(p.Fields, ", "))
	}
	return b.String()
}

func patternByName(name string) (pattern, bool) {
	for _, p := range patternRegistry() {
		if p.Name == name {
			return p, true
		}
	}
	return pattern{}, false
}

// commonFields every pattern takes.
func commonFields() []string {
	return []string{"name", "pattern", "tool", "msg_size", "qps", "host_list"}
}

// checker collects the problems of one traffic entry.
type checker struct {
	ix   *yamlpos.Index
	ps   *yamlpos.Problems
	path string // traffic[i]
	s    *Scenario
}

// written reports whether the entry's YAML sets field (even to its zero).
func (c *checker) written(field string) bool {
	return c.ix != nil && c.ix.Has(c.path+"."+field)
}

func (c *checker) add(field, format string, args ...any) {
	p := c.path
	if field != "" {
		p += "." + field
	}
	c.ix.Add(c.ps, p, format, args...)
}

func (c *checker) size(field, v string, required bool, pattern string) {
	if v == "" {
		if required {
			c.add(field, "required for pattern %s", pattern)
		}
		return
	}
	if n, err := ParseBytes(v); err != nil || n <= 0 {
		c.add(field, "bad size %q (e.g. 4096, 64KiB, 1MiB)", v)
	}
}

func (c *checker) duration(field, v string, required bool, pattern string) {
	if v == "" {
		if required {
			c.add(field, "required for pattern %s (e.g. 2ms)", pattern)
		}
		return
	}
	if d, err := time.ParseDuration(v); err != nil || d < 0 || (required && d == 0) {
		c.add(field, "bad duration %q (e.g. 200us, 2ms)", v)
	}
}

func (c *checker) cdf(v string) {
	if v == "" {
		return
	}
	if _, err := c.s.cdf(v); err != nil {
		c.add("cdf", "%v", err)
	}
}

// checkTraffic checks what every pattern shares, that the entry sets no
// field its pattern does not take, then the pattern's own rules.
func checkTraffic(c *checker, t Traffic) {
	c.size("msg_size", t.MsgSize, false, t.Pattern)
	// qps: 0 written out is a mistake, not "the default": perftest refuses it
	if t.QPs < 0 || t.QPs > 16384 || t.QPs == 0 && c.written("qps") {
		c.add("qps", "must be between 1 and 16384")
	}
	if msg, err := ParseBytes(t.MsgSize); err == nil && msg > 0 && t.Bytes != "" {
		if n, err := ParseBytes(t.Bytes); err == nil && n > 0 && msg > n {
			c.add("msg_size", "%s is larger than bytes (%s): a flow is at least one message", t.MsgSize, t.Bytes)
		}
	}
	switch t.Tool {
	case "", "ib_write_bw", "ib_read_bw", "ib_send_bw":
	default:
		c.add("tool", "unknown tool %q (ib_write_bw, ib_read_bw, ib_send_bw)", t.Tool)
	}
	p, ok := patternByName(t.Pattern)
	if !ok {
		if t.Pattern == "" {
			c.add("pattern", "required (%s)", strings.Join(PatternNames(), ", "))
		} else {
			c.add("pattern", "unknown pattern %q (%s)", t.Pattern, strings.Join(PatternNames(), ", "))
		}
		return
	}
	allowed := map[string]bool{}
	for _, f := range append(commonFields(), p.Fields...) {
		allowed[f] = true
	}
	for _, f := range setFields(t) {
		if !allowed[f] {
			c.add(f, "does not apply to pattern %s (it takes %s)", p.Name, strings.Join(p.Fields, ", "))
		}
	}
	p.check(c, t)
}

// setFields are the YAML names of t's fields that are not zero.
func setFields(t Traffic) []string {
	v := reflect.ValueOf(t)
	var out []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && !v.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}

func checkIncast(c *checker, t Traffic) {
	c.size("bytes", t.Bytes, true, t.Pattern)
	if t.Senders < 1 && len(t.HostList) == 0 {
		c.add("senders", "an incast needs senders >= 1 (or host_list)")
	}
	switch t.Spread {
	case "", SpreadLeaves:
		if t.Spread != "" && len(t.HostList) > 0 {
			c.add("spread", "does not apply with host_list (it names the senders)")
		}
	default:
		c.add("spread", "unknown spread %q (leaves, or leave it out for the lab's hosts in order)", t.Spread)
	}
}

// SpreadLeaves picks an incast's senders round robin over the leaves.
const SpreadLeaves = "leaves"

func checkAllReduce(c *checker, t Traffic) {
	c.size("buffer", t.Buffer, true, t.Pattern)
	if t.Hosts < 2 && len(t.HostList) < 2 {
		c.add("hosts", "an all-reduce ring needs hosts >= 2")
	}
	if t.Steps < 0 {
		c.add("steps", "must be >= 0 (0: all 2(N-1) steps)")
	}
}

func checkWorkload(c *checker, t Traffic) {
	if t.CDF == "" {
		c.add("cdf", "required: a shipped distribution (%s) or a CDF file", strings.Join(perftest.ShippedCDFs(), ", "))
	}
	c.cdf(t.CDF)
	if !finite(t.Load) || t.Load <= 0 || t.Load > 1 {
		c.add("load", "must be in (0, 1]: the fraction of each host's link rate")
	}
	c.duration("duration", t.Duration, true, t.Pattern)
	switch t.LoadBasis {
	case "", LoadBasisHost, LoadBasisNetwork:
	default:
		c.add("load_basis", "unknown basis %q (host: of each host's link; network: of the fabric's capacity)", t.LoadBasis)
	}
	switch t.Pairing {
	case "", perftest.PairRandom:
	case perftest.PairPermutation:
		if t.IntraRack != nil {
			c.add("intra_rack", "does not apply to pairing: permutation (each host has one partner)")
		}
	default:
		c.add("pairing", "unknown pairing %q (random or permutation)", t.Pairing)
	}
	if t.IntraRack != nil && (*t.IntraRack < 0 || *t.IntraRack > 1) {
		c.add("intra_rack", "must be in [0, 1]: the fraction of flows that stay in the sender's rack (1:3 intra:inter is 0.25)")
	}
	if t.Hosts < 0 {
		c.add("hosts", "must be >= 2 (or left out for every host)")
	}
}

func checkPermutation(c *checker, t Traffic) {
	if (t.Bytes == "") == (t.CDF == "") {
		c.add("", "a permutation needs either bytes (every flow's size) or cdf (sizes drawn from it)")
	}
	c.size("bytes", t.Bytes, false, t.Pattern)
	c.cdf(t.CDF)
	if t.Hosts < 0 {
		c.add("hosts", "must be >= 2 (or left out for every host)")
	}
}

func checkBurst(c *checker, t Traffic) {
	c.size("bytes", t.Bytes, false, t.Pattern)
	c.size("background_bytes", t.BackgroundBytes, false, t.Pattern)
	c.duration("interval", t.Interval, false, t.Pattern)
	c.duration("start", t.Start, false, t.Pattern)
	for _, f := range []struct {
		name string
		v    int
	}{{"senders", t.Senders}, {"background", t.Background}, {"bursts", t.Bursts}} {
		if f.v < 0 {
			c.add(f.name, "must be >= 1 (or left out for FLB's value)")
		}
	}
}
