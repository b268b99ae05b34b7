package lb

import (
	"errors"
	"strings"
	"testing"
)

type nop struct{ p Params }

func (nop) Select(Switch, *Packet, []Egress) int { return 0 }

func testRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	mk := func(p Params) (Module, error) { return nop{p}, nil }
	for _, s := range []Scheme{
		{Name: "drill", New: mk, Params: []Param{{Name: "d", Kind: Int, Default: "2", Min: 1}, {Name: "m", Kind: Int, Default: "1", Min: 1, Max: 8}}},
		{Name: "letflow", New: mk, Params: []Param{{Name: "timeout_us", Kind: Float, Default: "50", Above: true, Unit: "us"}}},
		{Name: "mode", New: mk, Params: []Param{{Name: "cc", Kind: Choice, Default: "a", Choices: []string{"a", "b"}}, {Name: "on", Kind: Bool, Default: "true"}}},
	} {
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestRegisterRefusesDuplicatesAndBadDefaults(t *testing.T) {
	t.Parallel()
	r := testRegistry(t)
	mk := func(Params) (Module, error) { return nop{}, nil }
	for _, tc := range []struct {
		s    Scheme
		want string
	}{
		{Scheme{Name: "drill", New: mk}, `"drill" registered twice`},
		{Scheme{Name: "x", New: mk, Params: []Param{{Name: "a", Default: "1"}, {Name: "a", Default: "1"}}}, `"a" declared twice`},
		{Scheme{Name: "y", New: mk, Params: []Param{{Name: "a", Kind: Int, Default: "0.5"}}}, "default of a="},
		{Scheme{Name: "", New: mk}, "needs a name"},
	} {
		if err := r.Register(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q): %v, want %q", tc.s.Name, err, tc.want)
		}
	}
	if got := strings.Join(r.Names(), ","); got != "drill,letflow,mode" {
		t.Errorf("Names: %s", got)
	}
}

func TestNewValidatesParams(t *testing.T) {
	t.Parallel()
	r := testRegistry(t)
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the error; none: valid
	}{
		{"drill", nil, nil},
		{"drill", map[string]string{"d": "3", "m": "8"}, nil},
		{"drill", map[string]string{"d": "0"}, []string{"parameter d: d=\"0\": want integer >= 1"}},
		{"drill", map[string]string{"m": "9"}, []string{"want integer >= 1, <= 8"}},
		{"drill", map[string]string{"d": "1.5", "mm": "1"}, []string{"parameter d:", "parameter mm: unknown parameter (did you mean \"m\"?); drill takes d, m"}},
		{"letflow", map[string]string{"timeout_us": "0"}, []string{"want number > 0"}},
		{"letflow", map[string]string{"timeout_us": "NaN"}, []string{"want number > 0"}},
		{"letflow", map[string]string{"timeout_us": "0.5"}, nil},
		{"mode", map[string]string{"cc": "c"}, []string{"want one of a, b"}},
		{"mode", map[string]string{"on": "maybe"}, []string{"want true or false"}},
		{"drlil", nil, []string{`"drlil": unknown load-balancing scheme (did you mean "drill"?); known: drill, letflow, mode`}},
		{"conga", nil, []string{"known: drill, letflow, mode"}},
	} {
		m, err := r.New(tc.name, tc.params)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s %v: %v", tc.name, tc.params, err)
			}
			continue
		}
		if err == nil || m != nil {
			t.Errorf("%s %v: accepted", tc.name, tc.params)
			continue
		}
		var pe *ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%s %v: %T is not a *ParamError", tc.name, tc.params, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: %v, want %q", tc.name, tc.params, err, w)
			}
		}
		if got := len(r.Problems(tc.name, tc.params)); got != len(tc.want) {
			t.Errorf("%s %v: %d problems, want %d", tc.name, tc.params, got, len(tc.want))
		}
	}
}

func TestFactoryGetsDefaultsFilledIn(t *testing.T) {
	t.Parallel()
	r := testRegistry(t)
	m, err := r.New("drill", map[string]string{"d": "4"})
	if err != nil {
		t.Fatal(err)
	}
	p := m.(nop).p
	if p.Int("d") != 4 || p.Int("m") != 1 {
		t.Errorf("d=%d m=%d, want 4 and the default 1", p.Int("d"), p.Int("m"))
	}
	m, _ = r.New("mode", nil)
	if p := m.(nop).p; !p.Bool("on") || p.String("cc") != "a" {
		t.Errorf("defaults: on=%v cc=%q", p.Bool("on"), p.String("cc"))
	}
	ps, ok := r.Params("letflow")
	if !ok || len(ps) != 1 || ps[0].Unit != "us" || ps[0].Rule() != "number > 0" {
		t.Errorf("Params(letflow): %+v", ps)
	}
}
