package lb

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParamKind is how a parameter's value is written.
type ParamKind uint8

const (
	Float ParamKind = iota
	Int
	Bool
	Choice
)

// Param declares one module parameter: listings show it, and the registry
// refuses values that break its rules.
type Param struct {
	Name    string
	Kind    ParamKind
	Default string
	Unit    string // e.g. "us", "bytes"; "" if none
	Help    string
	// Numbers must lie in [Min, Max] (Max <= Min: no upper bound); with
	// Above, strictly above Min.
	Min, Max float64
	Above    bool
	Choices  []string // Choice
}

// Rule is the parameter's validation rule in words, for listings.
func (p Param) Rule() string {
	switch p.Kind {
	case Bool:
		return "true or false"
	case Choice:
		return "one of " + strings.Join(p.Choices, ", ")
	}
	kind := "number"
	if p.Kind == Int {
		kind = "integer"
	}
	low := ">= "
	if p.Above {
		low = "> "
	}
	r := kind + " " + low + strconv.FormatFloat(p.Min, 'g', -1, 64)
	if p.Max > p.Min {
		r += ", <= " + strconv.FormatFloat(p.Max, 'g', -1, 64)
	}
	return r
}

func (p Param) check(v string) error {
	bad := func() error { return fmt.Errorf("%s=%q: want %s", p.Name, v, p.Rule()) }
	switch p.Kind {
	case Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return bad()
		}
		return nil
	case Choice:
		if !slices.Contains(p.Choices, v) {
			return bad()
		}
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || p.Kind == Int && f != math.Trunc(f) {
		return bad()
	}
	if f < p.Min || p.Above && f == p.Min || p.Max > p.Min && f > p.Max {
		return bad()
	}
	return nil
}

// Params are a module's validated parameter values, defaults filled in.
type Params struct{ v map[string]string }

// String is a parameter's value as written.
func (p Params) String(name string) string { return p.v[name] }

// Float is a numeric parameter (0 if undeclared).
func (p Params) Float(name string) float64 {
	f, _ := strconv.ParseFloat(p.v[name], 64)
	return f
}

// Nanos is a parameter given in microseconds (unit "us"), in ns: the
// engine's and the modules' clock.
func (p Params) Nanos(name string) int64 { return int64(p.Float(name) * 1000) }

// Int is an integer parameter (0 if undeclared).
func (p Params) Int(name string) int { return int(p.Float(name)) }

// Bool is a boolean parameter (false if undeclared).
func (p Params) Bool(name string) bool {
	b, _ := strconv.ParseBool(p.v[name])
	return b
}
