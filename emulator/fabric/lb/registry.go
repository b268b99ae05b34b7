package lb

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	suggestpkg "github.com/labctl/labctl/internal/suggest"
)

// Factory makes a module from validated parameters (every declared one is
// set: given or default).
type Factory func(p Params) (Module, error)

// Scheme is one registered module: its name, a line of help, its factory
// and its parameters.
type Scheme struct {
	Name   string
	Help   string
	New    Factory
	Params []Param
}

// Registry maps scheme names to modules. Build one with NewRegistry and
// the schemes' Register functions (package schemes does).
type Registry struct {
	schemes map[string]*Scheme
}

// NewRegistry is an empty registry.
func NewRegistry() *Registry { return &Registry{schemes: map[string]*Scheme{}} }

// Register adds a scheme; a name registered twice, or a parameter declared
// twice or with a default its own rules refuse, is an error.
func (r *Registry) Register(s Scheme) error {
	if s.Name == "" || s.New == nil {
		return errors.New("lb: a scheme needs a name and a factory")
	}
	if _, dup := r.schemes[s.Name]; dup {
		return fmt.Errorf("lb: scheme %q registered twice", s.Name)
	}
	seen := map[string]bool{}
	for _, p := range s.Params {
		if seen[p.Name] {
			return fmt.Errorf("lb: scheme %s: parameter %q declared twice", s.Name, p.Name)
		}
		seen[p.Name] = true
		if err := p.check(p.Default); err != nil {
			return fmt.Errorf("lb: scheme %s: default of %w", s.Name, err)
		}
	}
	s.Params = slices.Clone(s.Params)
	r.schemes[s.Name] = &s
	return nil
}

// Names lists the registered schemes, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.schemes))
	for n := range r.schemes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Scheme is a registered scheme by name.
func (r *Registry) Scheme(name string) (Scheme, bool) {
	s, ok := r.schemes[name]
	if !ok {
		return Scheme{}, false
	}
	return *s, true
}

// Params are a scheme's declared parameters.
func (r *Registry) Params(name string) ([]Param, bool) {
	s, ok := r.schemes[name]
	if !ok {
		return nil, false
	}
	return slices.Clone(s.Params), true
}

// Check validates a scheme's name and parameters without making a module:
// the problems, each a *ParamError, joined.
func (r *Registry) Check(name string, params map[string]string) error {
	_, err := r.params(name, params)
	return err
}

// Problems are Check's problems, one per parameter (Param "" for the
// scheme's name), in parameter order.
func (r *Registry) Problems(name string, params map[string]string) []*ParamError {
	_, ps := r.validate(name, params)
	return ps
}

// New makes a module of a registered scheme.
func (r *Registry) New(name string, params map[string]string) (Module, error) {
	p, err := r.params(name, params)
	if err != nil {
		return nil, err
	}
	m, err := r.schemes[name].New(p)
	if err != nil {
		return nil, fmt.Errorf("lb: scheme %s: %w", name, err)
	}
	return m, nil
}

func (r *Registry) params(name string, given map[string]string) (Params, error) {
	p, ps := r.validate(name, given)
	errs := make([]error, len(ps))
	for i, e := range ps {
		errs[i] = e
	}
	return p, errors.Join(errs...)
}

func (r *Registry) validate(name string, given map[string]string) (Params, []*ParamError) {
	s, ok := r.schemes[name]
	if !ok {
		return Params{}, []*ParamError{{Scheme: name, Msg: fmt.Sprintf("unknown load-balancing scheme%s; known: %s",
			suggest(name, r.Names()), strings.Join(r.Names(), ", "))}}
	}
	var errs []*ParamError
	p := Params{v: make(map[string]string, len(s.Params))}
	for _, d := range s.Params {
		p.v[d.Name] = d.Default
	}
	keys := make([]string, 0, len(given))
	for k := range given {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := given[k]
		i := slices.IndexFunc(s.Params, func(d Param) bool { return d.Name == k })
		if i < 0 {
			errs = append(errs, &ParamError{Scheme: name, Param: k, Msg: fmt.Sprintf("unknown parameter%s; %s takes %s",
				suggest(k, paramNames(s.Params)), name, orNone(paramNames(s.Params)))})
			continue
		}
		if err := s.Params[i].check(v); err != nil {
			errs = append(errs, &ParamError{Scheme: name, Param: k, Msg: err.Error()})
			continue
		}
		p.v[k] = v
	}
	return p, errs
}

func paramNames(ps []Param) []string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return n
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no parameters"
	}
	return strings.Join(s, ", ")
}

// ParamError is one problem with a scheme's name or a parameter.
type ParamError struct {
	Scheme, Param string // Param "": the scheme's name
	Msg           string
}

func (e *ParamError) Error() string {
	if e.Param == "" {
		return fmt.Sprintf("lb: %q: %s", e.Scheme, e.Msg)
	}
	return fmt.Sprintf("lb: %s: parameter %s: %s", e.Scheme, e.Param, e.Msg)
}

// suggest is ` (did you mean "x"?)` for the nearest known name within two
// edits, or "".
func suggest(name string, known []string) string { return suggestpkg.DidYouMean(name, known, 3) }
