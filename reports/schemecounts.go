package reports

import (
	"cmp"
	"slices"

	"github.com/labctl/labctl/collectors"
)

// Scheme counters: what an emulated lab's load-balancing modules counted
// in a point (flowlets, reroutes, elephants, CNMs, reordered packets ...;
// collectors/lbschema.go). Each switch's counter only grows, so a point's
// count is its increase over the point's window (the last sample in the
// window minus the last before it, as for every counter here), summed
// over the switches: the switch modules' and the hosts' modules' apart
// (scope). A scheme counts only what means something for it: a name a
// point lacks is not a zero.

// SchemeCount is one scheme counter's increase in a point, summed over
// the switches (Scope "switch") or over the hosts' modules ("hosts").
type SchemeCount struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Value uint64 `json:"value"`
}

// schemeKeys appends the counter keys of an lb_counters point: one, its value,
// named by scope (a port's: by port) and counter name.
func schemeKeys(p collectors.Point, base ckey, out []ckey) []ckey {
	if _, ok := p.Fields[collectors.LBFieldValue]; !ok {
		return out
	}
	base.port, base.queue = p.Tags[collectors.LBTagScope], p.Tags[collectors.LBTagName]
	base.field, base.kind = collectors.LBFieldValue, kScheme
	if base.port == collectors.LBScopePort { // a port's (pathelephants.go)
		base.port, base.kind = p.Tags[collectors.LBTagPort], kPortScheme
	}
	return append(out, base)
}

// addScheme adds one switch's increase d of counter k to the point's.
func addScheme(ps *PointSummary, k ckey, d uint64) {
	key := SchemeCount{Name: k.queue, Scope: k.port}
	i, found := slices.BinarySearchFunc(ps.SchemeCounts, key, schemeOrder)
	if !found {
		ps.SchemeCounts = slices.Insert(ps.SchemeCounts, i, key)
	}
	ps.SchemeCounts[i].Value += d
}

// schemeOrder orders counters by scope, the switches' first, then by
// name; two counters of one name and scope are the same counter.
func schemeOrder(a, b SchemeCount) int {
	return cmp.Or(cmp.Compare(scopeRank(a.Scope), scopeRank(b.Scope)), cmp.Compare(a.Name, b.Name))
}

// scopeRank puts the switches' counters before the hosts'.
func scopeRank(s string) int {
	if s == collectors.LBScopeSwitch {
		return 0
	}
	return 1
}

// schemeColumn names a counter's column: the hosts' are marked.
func schemeColumn(c SchemeCount) string {
	if c.Scope == collectors.LBScopeSwitch {
		return c.Name
	}
	return c.Name + " (" + c.Scope + ")"
}

// schemeColumns are the counters any point has, in schemeOrder.
func schemeColumns(s *Summary) []SchemeCount {
	var cols []SchemeCount
	for _, p := range s.Points {
		for _, c := range p.SchemeCounts {
			if i, found := slices.BinarySearchFunc(cols, c, schemeOrder); !found {
				cols = slices.Insert(cols, i, SchemeCount{Name: c.Name, Scope: c.Scope})
			}
		}
	}
	return cols
}

// schemeCount is a point's value of counter c; false when its scheme
// does not count it (absent is not zero).
func (p *PointSummary) schemeCount(c SchemeCount) (uint64, bool) {
	// not a binary search: a summary read back from JSON need not be in order
	i := slices.IndexFunc(p.SchemeCounts, func(o SchemeCount) bool { return schemeOrder(o, c) == 0 })
	if i < 0 {
		return 0, false
	}
	return p.SchemeCounts[i].Value, true
}

// schemeMetric names a counter in CSV columns (lb_ prefixed) and regress
// metrics (lb. prefixed): its name, the hosts' modules' marked.
func schemeMetric(c SchemeCount) string {
	if c.Scope == collectors.LBScopeSwitch {
		return c.Name
	}
	return c.Name + "_" + c.Scope
}

// schemeTable is one row per point that has scheme counters, one column
// per counter any point has ("–" where a point's scheme does not count
// it); no rows when no point has any.
func schemeTable(s *Summary) table {
	t := table{Title: "Scheme counters", Note: "Counts of the load-balancing modules (emulated lab): each counter's increase " +
		"over the point, summed over the switches; \"(hosts)\" counts the hosts' modules; – the scheme does not count it.",
		Header: []string{"Point", "Scheme"}}
	cols := schemeColumns(s)
	for _, c := range cols {
		t.Header = append(t.Header, schemeColumn(c))
	}
	for i := range s.Points {
		p := &s.Points[i]
		if len(p.SchemeCounts) == 0 {
			continue
		}
		row := []string{pointName(*p), cmpDash(p.Scheme)}
		for _, c := range cols {
			v := "–"
			if n, ok := p.schemeCount(c); ok {
				v = utoa(n)
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
