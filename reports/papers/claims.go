package papers

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed claims.yaml
var claimsYAML []byte

// File is the claims file: the report's opening prose and its papers, in
// the order the report shows them.
type File struct {
	// Intro is Markdown shown after the report's header: the conventions
	// every paper's section relies on.
	Intro  string  `yaml:"intro"`
	Papers []Paper `yaml:"papers"`
	// Outro is Markdown at the end of the report.
	Outro string `yaml:"outro"`
}

// Paper is one paper's section of the report.
type Paper struct {
	Name   string `yaml:"name"`
	Digest string `yaml:"digest"` // section of the seeds digest with its claims, e.g. "3.1"
	// Setup is Markdown before the tables: what the scenarios run and
	// what they choose where the paper is silent.
	Setup     string     `yaml:"setup"`
	Scenarios []Scenario `yaml:"scenarios"`
	Tables    []Table    `yaml:"tables"`
	Claims    []Claim    `yaml:"claims"`
	// Notes is Markdown after the claims: where the twin differs, and
	// what was checked. It is hand-written against full-scale runs.
	Notes string `yaml:"notes"`
}

// Scenario is one scenario a paper's claims read, and how --quick cuts it.
type Scenario struct {
	Name  string `yaml:"name"` // a built-in scenario, e.g. papers/gemma
	Quick Quick  `yaml:"quick"`
}

// Quick is a scenario's reduced scale: fields set (matrix paths to YAML
// values, e.g. traffic[0].duration: 1ms) and sweeps cut to some values
// (by the sweep's parameter name: scheme, load, ...).
type Quick struct {
	Set  map[string]string   `yaml:"set"`
	Keep map[string][]string `yaml:"keep"`
}

// Table is a table of the twin's figures: one row per metric and
// condition, one column per value of By (default: scheme).
type Table struct {
	Scenario string   `yaml:"scenario"` // default: the paper's first
	Title    string   `yaml:"title"`
	By       string   `yaml:"by"`
	Columns  []string `yaml:"columns"`
	Rows     []Row    `yaml:"rows"`
}

// Row is one row of a Table.
type Row struct {
	Label string `yaml:"label"`
	Query `yaml:",inline"`
}

// Query says which number of a run's summary to take: a metric, of the
// flows in one size bucket or all, at the points whose parameters match
// Where.
type Query struct {
	Metric string            `yaml:"metric"`
	Bucket string            `yaml:"bucket,omitempty"` // e.g. ">=1MB"; "" for all flows
	Where  map[string]string `yaml:"where,omitempty"`
}

// Claim is one claim of the paper and how to check it: Compare (A against
// B, the paper's direction in Expect) or Order (worst to best); Best
// names the one that must come out best among Order.
type Claim struct {
	Scenario string `yaml:"scenario"` // default: the paper's first
	Text     string `yaml:"text"`
	Paper    string `yaml:"paper"` // the paper's figure, as the digest gives it
	By       string `yaml:"by"`    // the parameter A, B and Order name (default: scheme)
	Query    `yaml:",inline"`
	// Compare: the relative change of A's metric against B's; several A
	// are checked one by one (a sweep of A against one baseline).
	A      []string `yaml:"a,omitempty"`
	B      string   `yaml:"b,omitempty"`
	Expect string   `yaml:"expect,omitempty"` // lower | higher: A against B, as the paper says
	// Order lists the schemes worst first, as the paper ranks them;
	// "a~b" are ranked level by the paper, so not against each other.
	Order []string `yaml:"order,omitempty"`
	// Best, with Order, checks only that Best comes out best of them.
	Best string `yaml:"best,omitempty"`
}

// Kinds of claims.
const (
	KindCompare = "compare"
	KindOrder   = "order"
	KindBest    = "best"
)

// Kind is the claim's kind.
func (c Claim) Kind() string {
	switch {
	case c.Best != "":
		return KindBest
	case len(c.Order) > 0:
		return KindOrder
	default:
		return KindCompare
	}
}

// Load parses the embedded claims file.
func Load() (*File, error) { return Parse(claimsYAML, "claims.yaml") }

// Parse reads a claims file and checks what needs no run: known metrics
// and kinds, scenarios named, defaults filled in.
func Parse(data []byte, name string) (*File, error) {
	var f File
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	for i := range f.Papers {
		if err := f.Papers[i].normalise(); err != nil {
			errs = append(errs, fmt.Errorf("%s: paper %s: %w", name, f.Papers[i].Name, err))
		}
	}
	return &f, errors.Join(errs...)
}

// Scenarios lists every scenario of every paper, in report order.
func (f *File) Scenarios() []Scenario {
	var out []Scenario
	for _, p := range f.Papers {
		out = append(out, p.Scenarios...)
	}
	return out
}

func (p *Paper) normalise() error {
	if len(p.Scenarios) == 0 {
		return errors.New("no scenarios")
	}
	var names []string
	for _, s := range p.Scenarios {
		names = append(names, s.Name)
	}
	scen := func(s *string) error {
		if *s == "" {
			*s = names[0]
		}
		if !slices.Contains(names, *s) {
			return fmt.Errorf("scenario %s is not among the paper's (%s)", *s, strings.Join(names, ", "))
		}
		return nil
	}
	var errs []error
	for i := range p.Tables {
		t := &p.Tables[i]
		if t.By == "" {
			t.By = "scheme"
		}
		errs = append(errs, scen(&t.Scenario))
		for _, r := range t.Rows {
			errs = append(errs, r.Query.check())
		}
	}
	for i := range p.Claims {
		c := &p.Claims[i]
		if c.By == "" {
			c.By = "scheme"
		}
		err := errors.Join(scen(&c.Scenario), c.Query.check(), c.check())
		if err != nil {
			errs = append(errs, fmt.Errorf("claim %q: %w", c.Text, err))
		}
	}
	return errors.Join(errs...)
}

func (c Claim) check() error {
	switch c.Kind() {
	case KindCompare:
		if len(c.A) == 0 || c.B == "" {
			return errors.New("a claim needs a and b (a comparison) or order")
		}
		if c.Expect != "lower" && c.Expect != "higher" {
			return fmt.Errorf("expect %q: want lower or higher", c.Expect)
		}
	case KindBest:
		if !slices.Contains(c.members(), c.Best) {
			return fmt.Errorf("best %s is not in order", c.Best)
		}
	}
	if c.Kind() != KindCompare && len(c.members()) < 2 {
		return errors.New("order needs two or more")
	}
	return nil
}

func (q Query) check() error {
	if _, ok := metrics[q.Metric]; !ok {
		return fmt.Errorf("unknown metric %q (known: %s)", q.Metric, strings.Join(MetricNames(), ", "))
	}
	if q.Bucket != "" && !metrics[q.Metric].byBucket {
		return fmt.Errorf("metric %s has no size buckets", q.Metric)
	}
	return nil
}

// members are the schemes Order names, level groups split.
func (c Claim) members() []string {
	var out []string
	for _, g := range c.Order {
		out = append(out, strings.Split(g, "~")...)
	}
	return out
}

// Cutter is what Quick.Apply needs of a scenario (*scenarios.Scenario).
type Cutter interface {
	Set(path, value string) error
	Keep(name string, values ...string) error
}

// Apply cuts s to the quick scale: the sweeps first, then the fields, in
// name order.
func (q Quick) Apply(s Cutter) error {
	for _, k := range slices.Sorted(maps.Keys(q.Keep)) {
		if err := s.Keep(k, q.Keep[k]...); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(q.Set)) {
		if err := s.Set(k, q.Set[k]); err != nil {
			return err
		}
	}
	return nil
}
