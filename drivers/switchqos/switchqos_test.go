package switchqos

import (
	"strings"
	"testing"
)

func base() Config {
	c := Config{XoffBytes: 524288, XonBytes: 393216, HeadroomBytes: 65536,
		Pools:     map[string]int64{PoolLossless: 4 << 20, PoolLossy: 6 << 20},
		ECN:       map[int]ECN{3: {100000, 400000, 20}},
		DSCP:      map[int]int{26: 3, 48: 6},
		Scheduler: DWRR, Weights: map[int]int{0: 1, 3: 4}}
	c.PFC[3] = true
	return c
}

func TestDiffOneValueOneSetting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
	}{
		{"ecn kmin", func(c *Config) { c.ECN = map[int]ECN{3: {150000, 400000, 20}} }, "queue[3].ecn.kmin_bytes"},
		{"pfc", func(c *Config) { c.PFC[4] = true }, "priority[4].pfc"},
		{"xoff", func(c *Config) { c.XoffBytes = 600000 }, "xoff_bytes"},
		{"headroom", func(c *Config) { c.HeadroomBytes = 1 << 17 }, "headroom_bytes"},
		{"pool", func(c *Config) { c.Pools = map[string]int64{PoolLossless: 5 << 20, PoolLossy: 6 << 20} }, "pool[lossless].bytes"},
		{"dscp", func(c *Config) { c.DSCP = map[int]int{26: 4, 48: 6} }, "dscp[26].tc"},
		{"weight", func(c *Config) { c.Weights = map[int]int{0: 1, 3: 8} }, "queue[3].dwrr_weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := base()
			tc.change(&want)
			d := Diff(base(), want)
			if len(d) != 1 || d[0].Field != tc.field {
				t.Fatalf("got %+v, want one %s", d, tc.field)
			}
		})
	}
	if d := Diff(base(), base()); len(d) != 0 {
		t.Fatalf("equal configs differ: %+v", d)
	}
}

func TestDiffIgnoresUnmanaged(t *testing.T) {
	have := base()
	want := Config{XoffBytes: have.XoffBytes, XonBytes: have.XonBytes, PFC: have.PFC}
	if d := Diff(have, want); len(d) != 0 {
		t.Fatalf("unmanaged fields diffed: %+v", d)
	}
	// a queue the device has no marking for
	want.ECN = map[int]ECN{5: {1, 2, 3}}
	if d := Diff(have, want); len(d) != 3 || d[0].From != "none" {
		t.Fatalf("%+v", d)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		field  string
	}{
		{func(c *Config) { c.XonBytes = c.XoffBytes + 1 }, "xon_bytes"},
		{func(c *Config) { c.Alpha = 0.125 }, "pfc_alpha"},                              // with static thresholds
		{func(c *Config) { c.XoffBytes, c.XonBytes, c.Alpha = 0, 0, 0.3 }, "pfc_alpha"}, // not a step
		{func(c *Config) { c.ECN = map[int]ECN{3: {500000, 400000, 20}} }, "ecn.3.kmin_bytes"},
		{func(c *Config) { c.ECN = map[int]ECN{9: {1, 2, 3}} }, "ecn.9"},
		{func(c *Config) { c.ECN = map[int]ECN{3: {1, 2, 300}} }, "ecn.3.pmax_percent"},
		{func(c *Config) { c.DSCP = map[int]int{64: 1} }, "dscp_to_tc.64"},
		{func(c *Config) { c.DSCP = map[int]int{26: 8} }, "dscp_to_tc.26"},
		{func(c *Config) { c.Weights = map[int]int{3: 0} }, "dwrr_weights.3"},
		{func(c *Config) { c.Scheduler = Strict }, "dwrr_weights"},
		{func(c *Config) { c.Scheduler = "wfq" }, "scheduler"},
		{func(c *Config) { c.Pools = map[string]int64{"video": 1} }, "buffer_pools.video"},
		{func(c *Config) { c.Pools = map[string]int64{PoolLossless: 8 << 20, PoolLossy: 8 << 20} }, "buffer_pools"},
	} {
		c := base()
		tc.change(&c)
		ps := c.Check(12 << 20)
		if len(ps) == 0 || ps[0].Field != tc.field {
			t.Errorf("%s: got %v", tc.field, ps)
		}
	}
	if ps := base().Check(12 << 20); len(ps) != 0 {
		t.Fatalf("a good config: %v", ps)
	}
	dyn := base()
	dyn.XoffBytes, dyn.XonBytes, dyn.Alpha = 0, 0, 0.125
	if ps := dyn.Check(0); len(ps) != 0 {
		t.Fatalf("alpha 1/8: %v", ps)
	}
}

func TestQuantizeRoundsUpToCells(t *testing.T) {
	q := base().Quantize(80)
	if q.XoffBytes != 524320 || q.XonBytes != 393280 || q.ECN[3].KminBytes != 100000 || q.Pools[PoolLossless] != 4194320 {
		t.Fatalf("%+v", q)
	}
	if base().Quantize(1).XoffBytes != 524288 {
		t.Fatal("cell 1 changes nothing")
	}
}

func TestMergePorts(t *testing.T) {
	want := base()
	have := map[string]Config{"1/0": base(), "2/0": base(), "3/0": base()}
	for _, p := range []string{"1/0", "2/0", "3/0"} {
		c := have[p]
		c.ECN = map[int]ECN{3: {90000, 400000, 20}} // every port: one setting
		have[p] = c
	}
	c := have["2/0"]
	c.PFC[3] = false // one port drifted
	have["2/0"] = c
	d := MergePorts([]string{"1/0", "2/0", "3/0"}, have, want)
	if len(d) != 2 || d[0].Field != "priority[3].pfc" || strings.Join(d[0].Ports, ",") != "2/0" ||
		d[1].Field != "queue[3].ecn.kmin_bytes" || d[1].Ports != nil {
		t.Fatalf("%+v", d)
	}
}

// A removed entry the device still holds differs (to "none"); once gone
// it does not; entries a profile neither sets nor removes are Unnamed.
func TestRemoveAndUnnamed(t *testing.T) {
	have := base()
	have.ECN[5] = ECN{1000, 2000, 10}
	have.DSCP[10] = 2
	want := base()
	want.Remove = Removal{ECN: []int{5}, DSCP: []int{10}, Pools: []string{PoolLossy}}
	delete(want.Pools, PoolLossy)
	d := Diff(have, want)
	var got []string
	for _, s := range d {
		got = append(got, s.Field+" "+s.From+" -> "+s.To)
	}
	if strings.Join(got, "; ") != "pool[lossy].bytes 6291456 -> none; dscp[10].tc 2 -> none; "+
		"queue[5].ecn.kmin_bytes 1000 -> none; queue[5].ecn.kmax_bytes 2000 -> none; queue[5].ecn.pmax_percent 10 -> none" {
		t.Fatalf("diff: %s", strings.Join(got, "; "))
	}
	if w := want.Remove.Within(base()); len(w.ECN) != 0 || len(w.DSCP) != 0 || len(w.Pools) != 1 {
		t.Fatalf("within what the device has: %+v", w)
	}
	gone := base()
	delete(gone.Pools, PoolLossy)
	if d := Diff(gone, want); len(d) != 0 {
		t.Fatalf("removed entries that are gone still differ: %+v", d)
	}

	// a profile that names only queue 3 leaves queue 5's marking: noted, not a change
	if u := Unnamed(have, base()); len(u) != 2 || u[0].Field != "dscp[10].tc" || u[1].Field != "queue[5].ecn" || u[1].From != "kmin_bytes 1000, kmax_bytes 2000, pmax_percent 10" {
		t.Fatalf("unnamed: %+v", u)
	}
	if u := Unnamed(have, Config{}); len(u) != 0 {
		t.Fatalf("tables the profile does not manage: %+v", u)
	}
}

// Every problem of a configuration is reported, several of one queue too.
func TestCheckReportsEveryProblem(t *testing.T) {
	c := base()
	c.ECN = map[int]ECN{3: {KminBytes: 500000, KmaxBytes: 400000, PmaxPercent: 120}, 4: {KminBytes: -1, KmaxBytes: 10}}
	c.Remove = Removal{ECN: []int{9}, DSCP: []int{70}, Pools: []string{"video"}}
	var got []string
	for _, p := range c.Check(12 << 20) {
		got = append(got, p.Field)
	}
	if strings.Join(got, " ") != "ecn.3.kmin_bytes ecn.3.pmax_percent ecn.4.kmin_bytes ecn.9 dscp_to_tc.70 buffer_pools.video" {
		t.Fatalf("problems: %v", got)
	}
}
