package reports

import (
	"fmt"
	"strings"
	"testing"
)

// TestPathElephantsPerPoint: a point's per-link elephant counts are each
// port counter's increase over its window (the previous run's total
// before it is not counted; one first seen inside counts from 0), kept
// apart from the scheme counters; the
// report's "Elephants per path" summary gives the links that carried
// elephants, the most on one, the links over t = 1 and the
// elephant-intervals, and the per-link table lists the links that
// carried one; a point without them has no row.
func TestPathElephantsPerPoint(t *testing.T) {
	dir := schemeRun(t, []PointMeta{
		{Name: "re", Pattern: "allreduce", Params: map[string]any{ParamScheme: "reunion"}, Hosts: 2, Flows: 1, StartNs: t0, EndNs: t0 + 10*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
		{Name: "ec", Pattern: "allreduce", Params: map[string]any{ParamScheme: "ecmp"}, Hosts: 2, Flows: 1, StartNs: t0 + 100*ms, EndNs: t0 + 110*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
	})
	var lp lpWriter
	lp.t = t
	c := func(dev, port, name string, at, v int64) {
		lp.add("lb_counters", fmt.Sprintf("device=%s,name=%s,port=%s,scope=port", dev, name, port), t0+at, fmt.Sprintf("value=%du", v))
	}
	// leaf1 Ethernet8: a previous run left max 3, intervals 10; this one
	// adds 2 and 7. leaf1 Ethernet12: first reported inside the window
	// (the module's first run), 1 and 4 from 0. spine1 Ethernet0: counted
	// by the module, but no elephant this run.
	c("leaf1", "Ethernet8", "elephants_max", -ms, 3)
	c("leaf1", "Ethernet8", "elephant_intervals", -ms, 10)
	c("leaf1", "Ethernet8", "elephants_max", 4*ms, 4)
	c("leaf1", "Ethernet8", "elephants_max", 9*ms, 5)
	c("leaf1", "Ethernet8", "elephant_intervals", 9*ms, 17)
	c("leaf1", "Ethernet12", "elephants_max", 2*ms, 1) // first seen in the window: from 0
	c("leaf1", "Ethernet12", "elephant_intervals", 2*ms, 2)
	c("leaf1", "Ethernet12", "elephants_max", 9*ms, 1)
	c("leaf1", "Ethernet12", "elephant_intervals", 9*ms, 4)
	c("spine1", "Ethernet0", "elephants_max", 9*ms, 0)
	c("spine1", "Ethernet0", "elephant_intervals", 9*ms, 0)
	lp.add("lb_counters", "device=leaf1,name=elephants,scope=switch", t0, "value=0u")
	lp.add("lb_counters", "device=leaf1,name=elephants,scope=switch", t0+9*ms, "value=2u")
	lp.save(dir)

	s := analyseDir(t, dir)
	got := map[string]string{}
	for _, p := range s.Points {
		got[p.Name] = fmt.Sprint(p.PathElephants, p.SchemeCounts)
	}
	want := map[string]string{
		"re": "[{leaf1 Ethernet12 1 4} {leaf1 Ethernet8 2 7} {spine1 Ethernet0 0 0}] [{elephants switch 2}]",
		"ec": "[] []",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("path elephants %v, want %v", got, want)
	}

	for title, lines := range map[string][]string{
		"Elephants per path": {
			"| Point | Scheme | Links with elephants | Max elephants on a link | Links with > 1 | Elephant-intervals |",
			"| re | reunion | 2 | 2 | 1 | 11 |",
		},
		"Elephants per link": {
			"| re | reunion | leaf1 Ethernet12 | 1 | 4 |",
			"| re | reunion | leaf1 Ethernet8 | 2 | 7 |",
		},
	} {
		tbl := mdSection(t, s, title)
		for _, line := range lines {
			if !strings.Contains(tbl, line+"\n") {
				t.Errorf("%s lacks %q:\n%s", title, line, tbl)
			}
		}
		if strings.Contains(tbl, "| ec |") || strings.Contains(tbl, "spine1") {
			t.Errorf("%s has a row for a point or link without elephants:\n%s", title, tbl)
		}
	}
}
