package lb

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/labctl/labctl/internal/registry"
	suggestpkg "github.com/labctl/labctl/internal/suggest"
)

// Factory makes a module from validated parameters (every declared one is
// set: given or default).
type Factory = func(p Params) (Module, error)

// Scheme is one registered switch module: its name, a line of help, its
// factory and its parameters.
type Scheme = Entry[Module]

// Entry is one registered module of interface M.
type Entry[M any] struct {
	Name   string
	Help   string
	New    func(p Params) (M, error)
	Params []Param
}

// Registry maps scheme names to switch modules. Build one with
// NewRegistry and the schemes' Register functions (package schemes does).
type Registry = Catalog[Module]

// Catalog maps names to modules of interface M: the switch modules'
// Registry, and the host modules' (package hostlb) with the same rules.
type Catalog[M any] struct {
	pkg     string // error prefix
	schemes *registry.Registry[*Entry[M]]
}

// NewRegistry is an empty registry of switch modules.
func NewRegistry() *Registry { return NewCatalog[Module]("lb", "load-balancing scheme") }

// NewCatalog is an empty catalog whose errors start "pkg: " and call a
// name "what" (e.g. "host module").
func NewCatalog[M any](pkg, what string) *Catalog[M] {
	return &Catalog[M]{pkg: pkg, schemes: registry.New[*Entry[M]](what)}
}

// Register adds a scheme; a name registered twice, or a parameter declared
// twice or with a default its own rules refuse, is an error.
func (r *Catalog[M]) Register(s Entry[M]) error {
	what := r.schemes.What()
	if s.Name == "" || s.New == nil {
		return fmt.Errorf("%s: a %s needs a name and a factory", r.pkg, what)
	}
	seen := map[string]bool{}
	for _, p := range s.Params {
		if seen[p.Name] {
			return fmt.Errorf("%s: %s %s: parameter %q declared twice", r.pkg, what, s.Name, p.Name)
		}
		seen[p.Name] = true
		if err := p.check(p.Default); err != nil {
			return fmt.Errorf("%s: %s %s: default of %w", r.pkg, what, s.Name, err)
		}
	}
	s.Params = slices.Clone(s.Params)
	if err := r.schemes.Register(s.Name, &s); err != nil {
		return fmt.Errorf("%s: %w", r.pkg, err)
	}
	return nil
}

// Names lists the registered schemes, sorted.
func (r *Catalog[M]) Names() []string { return r.schemes.Names() }

// Scheme is a registered scheme by name.
func (r *Catalog[M]) Scheme(name string) (Entry[M], bool) {
	s, ok := r.schemes.Lookup(name)
	if !ok {
		return Entry[M]{}, false
	}
	return *s, true
}

// Params are a scheme's declared parameters.
func (r *Catalog[M]) Params(name string) ([]Param, bool) {
	s, ok := r.schemes.Lookup(name)
	if !ok {
		return nil, false
	}
	return slices.Clone(s.Params), true
}

// Check validates a scheme's name and parameters without making a module:
// the problems, each a *ParamError, joined.
func (r *Catalog[M]) Check(name string, params map[string]string) error {
	_, err := r.params(name, params)
	return err
}

// Problems are Check's problems, one per parameter (Param "" for the
// scheme's name), in parameter order.
func (r *Catalog[M]) Problems(name string, params map[string]string) []*ParamError {
	_, ps := r.validate(name, params)
	return ps
}

// New makes a module of a registered scheme.
func (r *Catalog[M]) New(name string, params map[string]string) (M, error) {
	var zero M
	p, err := r.params(name, params)
	if err != nil {
		return zero, err
	}
	s, _ := r.schemes.Lookup(name) // params found it
	m, err := s.New(p)
	if err != nil {
		return zero, fmt.Errorf("%s: %s %s: %w", r.pkg, r.schemes.What(), name, err)
	}
	return m, nil
}

func (r *Catalog[M]) params(name string, given map[string]string) (Params, error) {
	p, ps := r.validate(name, given)
	errs := make([]error, len(ps))
	for i, e := range ps {
		errs[i] = e
	}
	return p, errors.Join(errs...)
}

func (r *Catalog[M]) validate(name string, given map[string]string) (Params, []*ParamError) {
	s, err := r.schemes.Get(name)
	if err != nil {
		msg := err.Error()
		if u := (*registry.UnknownError)(nil); errors.As(err, &u) {
			msg = u.Detail() // the name goes where ParamError puts it
		}
		return Params{}, []*ParamError{{pkg: r.pkg, Scheme: name, Msg: msg}}
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
			errs = append(errs, &ParamError{pkg: r.pkg, Scheme: name, Param: k, Msg: fmt.Sprintf("unknown parameter%s; %s takes %s",
				suggest(k, paramNames(s.Params)), name, orNone(paramNames(s.Params)))})
			continue
		}
		if err := s.Params[i].check(v); err != nil {
			errs = append(errs, &ParamError{pkg: r.pkg, Scheme: name, Param: k, Msg: err.Error()})
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
	pkg           string // the catalog's error prefix
}

func (e *ParamError) Error() string {
	pkg := cmp.Or(e.pkg, "lb")
	if e.Param == "" {
		return fmt.Sprintf("%s: %q: %s", pkg, e.Scheme, e.Msg)
	}
	return fmt.Sprintf("%s: %s: parameter %s: %s", pkg, e.Scheme, e.Param, e.Msg)
}

// suggest is ` (did you mean "x"?)` for the nearest known name within two
// edits, or "".
func suggest(name string, known []string) string { return suggestpkg.DidYouMean(name, known, 3) }
