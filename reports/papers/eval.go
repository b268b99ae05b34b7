package papers

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labctl/labctl/reports"
)

// Agreement words of a Result.
const (
	Agree    = "yes"
	Disagree = "no"
	NA       = "n/a"
)

// Result is a claim as the twin's run decides it.
type Result struct {
	Claim Claim
	Twin  string // the twin's figure
	Agree string // Agree, Disagree (with what differs) or NA (with why)
}

// Value is one number of a summary: the query's metric at the single
// point whose parameters match its Where and by=val.
func Value(sum *reports.Summary, q Query, by, val string) (float64, error) {
	p, err := point(sum, q.Where, by, val)
	if err != nil {
		return 0, err
	}
	return metrics[q.Metric].read(p, q.Bucket)
}

// point finds the one completed point matching where and by=val.
func point(sum *reports.Summary, where map[string]string, by, val string) (*reports.PointSummary, error) {
	want := maps.Clone(where)
	if want == nil {
		want = map[string]string{}
	}
	want[by] = val
	var found []*reports.PointSummary
	for i := range sum.Points {
		p := &sum.Points[i]
		if p.Status == reports.StatusOK && matches(p, want) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("no completed point with %s", selector(want))
	}
	return nil, fmt.Errorf("%d points with %s: the claim must pick one", len(found), selector(want))
}

func matches(p *reports.PointSummary, want map[string]string) bool {
	for k, v := range want {
		got, ok := p.Params[k]
		if !ok && k == reports.ParamScheme && p.Scheme != "" {
			got, ok = p.Scheme, true
		}
		if !ok || paramString(got) != v {
			return false
		}
	}
	return true
}

// paramString writes a parameter as a claims file names it: loads as
// written (0.8), labels as they are.
func paramString(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func selector(want map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		parts = append(parts, k+"="+want[k])
	}
	return strings.Join(parts, ", ")
}

// Evaluate decides a claim on a run's summary; a nil summary (the
// scenario did not run) makes it n/a.
func Evaluate(c Claim, sum *reports.Summary) Result {
	r := Result{Claim: c}
	if sum == nil {
		r.Agree = NA + ": not run"
		return r
	}
	var err error
	switch c.Kind() {
	case KindCompare:
		r.Twin, r.Agree, err = compare(c, sum)
	default:
		r.Twin, r.Agree, err = order(c, sum)
	}
	if err != nil {
		r.Twin, r.Agree = "", NA+": "+err.Error()
	}
	return r
}

// compare is A's relative change against B, for each A.
func compare(c Claim, sum *reports.Summary) (twin, agree string, err error) {
	m := metrics[c.Metric]
	vb, err := Value(sum, c.Query, c.By, c.B)
	if err != nil {
		return "", "", err
	}
	if vb == 0 {
		return "", "", fmt.Errorf("%s of %s is 0: no relative change", c.Metric, c.B)
	}
	var figs []string
	var changes []float64
	ok := 0
	for _, a := range c.A {
		va, err := Value(sum, c.Query, c.By, a)
		if err != nil {
			return "", "", err
		}
		change := (va - vb) / vb * 100
		fig := fmt.Sprintf("%+.1f %% (%s against %s)", change, m.format(va), m.format(vb))
		if len(c.A) > 1 {
			fig = a + ": " + fig
		}
		figs = append(figs, fig)
		if c.Expect == "lower" && change < 0 || c.Expect == "higher" && change > 0 {
			ok++
		}
		changes = append(changes, change)
	}
	agree = verdict(ok, len(c.A), "")
	if size := magnitude(c.Paper, changes); agree == Agree && size != "" {
		agree += " (" + size + ")"
	}
	return strings.Join(figs, "; "), agree, nil
}

// paperPercent reads a paper figure that is one relative change ("-6 %").
var paperPercent = regexp.MustCompile(`^([-+]?[0-9]+(?:\.[0-9]+)?) %$`)

// magnitude compares the size of the twin's change with the paper's
// when the paper gives one number: "larger" past 1.5 times it, "smaller"
// under two thirds of it, "" otherwise or when it cannot tell.
func magnitude(paper string, changes []float64) string {
	m := paperPercent.FindStringSubmatch(strings.TrimSpace(paper))
	if m == nil || len(changes) != 1 {
		return ""
	}
	p, _ := strconv.ParseFloat(m[1], 64)
	switch r := math.Abs(changes[0]) / math.Abs(p); {
	case p == 0:
		return ""
	case r > 1.5:
		return "larger"
	case r < 2.0/3:
		return "smaller"
	}
	return ""
}

// order ranks Order by the twin's figures, worst first, and counts the
// pairs ranked as the paper ranks them: members of different groups
// (Best: Best against each of the others).
func order(c Claim, sum *reports.Summary) (twin, agree string, err error) {
	m := metrics[c.Metric]
	vals := map[string]float64{}
	for _, s := range c.members() {
		if vals[s], err = Value(sum, c.Query, c.By, s); err != nil {
			return "", "", err
		}
	}
	ranked := c.members()
	sort.SliceStable(ranked, func(i, j int) bool { return m.worse(vals[ranked[i]], vals[ranked[j]]) })
	var parts []string
	for _, s := range ranked {
		parts = append(parts, fmt.Sprintf("%s (%s)", s, m.format(vals[s])))
	}
	ok, n := 0, 0
	check := func(worse, better string) {
		n++
		if m.worse(vals[worse], vals[better]) {
			ok++
		}
	}
	if c.Kind() == KindBest {
		for _, s := range c.members() {
			if s != c.Best {
				check(s, c.Best)
			}
		}
		return strings.Join(parts, " > "), verdict(ok, n, ""), nil
	}
	for i, g := range c.Order {
		for _, h := range c.Order[i+1:] {
			for _, worse := range strings.Split(g, "~") {
				for _, better := range strings.Split(h, "~") {
					check(worse, better)
				}
			}
		}
	}
	return strings.Join(parts, " > "), verdict(ok, n, " pairs"), nil
}

// verdict is Agree when all n checks hold, else Disagree with the count.
func verdict(ok, n int, what string) string {
	if ok == n {
		return Agree
	}
	if n == 1 {
		return Disagree
	}
	return fmt.Sprintf("%s (%d of %d%s as the paper)", Disagree, ok, n, what)
}

// TableCells are a table's figures, row by row, column by column ("n/a"
// where the run has no such point).
func TableCells(t Table, sum *reports.Summary) [][]string {
	out := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		for _, col := range t.Columns {
			cell := NA
			if sum != nil {
				if v, err := Value(sum, r.Query, t.By, col); err == nil {
					cell = metrics[r.Metric].format(v)
				}
			}
			out[i] = append(out[i], cell)
		}
	}
	return out
}

// Resolve checks that every table cell and claim of the paper finds its
// point in sum (a summary of the scenario it names): the claims file's
// selectors against the scenario's real parameters.
func Resolve(p Paper, scenario string, sum *reports.Summary) error {
	var errs []error
	for _, t := range p.Tables {
		if t.Scenario != scenario {
			continue
		}
		for _, r := range t.Rows {
			for _, col := range t.Columns {
				if _, err := Value(sum, r.Query, t.By, col); err != nil {
					errs = append(errs, fmt.Errorf("table %q row %q column %s: %w", t.Title, r.Label, col, err))
				}
			}
		}
	}
	for _, c := range p.Claims {
		if c.Scenario != scenario {
			continue
		}
		if r := Evaluate(c, sum); strings.HasPrefix(r.Agree, NA) {
			errs = append(errs, fmt.Errorf("claim %q: %s", c.Text, r.Agree))
		}
	}
	return errors.Join(errs...)
}
