package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/suggest"
)

// Registry maps names to values of type T. The zero value is not usable:
// build one with New.
type Registry[T any] struct {
	what  string // what a name names, for errors: "load-balancing scheme"
	items map[string]T
}

// New is an empty registry whose errors call a name a "what" (e.g.
// "engine", "switch QoS driver").
func New[T any](what string) *Registry[T] {
	return &Registry[T]{what: what, items: map[string]T{}}
}

// What is what a name names, as errors say it.
func (r *Registry[T]) What() string { return r.what }

// Register adds v under name. An empty name, or one registered before, is
// an error and leaves the registry as it was.
func (r *Registry[T]) Register(name string, v T) error {
	if name == "" {
		return fmt.Errorf("a %s needs a name", r.what)
	}
	if _, dup := r.items[name]; dup {
		return fmt.Errorf("%s %q registered twice", r.what, name)
	}
	r.items[name] = v
	return nil
}

// Get is the value registered under name, or an *UnknownError listing
// the known names.
func (r *Registry[T]) Get(name string) (T, error) {
	v, ok := r.items[name]
	if !ok {
		return v, &UnknownError{What: r.what, Name: name, Known: r.Names()}
	}
	return v, nil
}

// Lookup is Get without the error, for callers that phrase their own.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	v, ok := r.items[name]
	return v, ok
}

// Names lists the registered names, sorted.
func (r *Registry[T]) Names() []string {
	out := make([]string, 0, len(r.items))
	for n := range r.items {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// UnknownError is a name no registered value has.
type UnknownError struct {
	What  string   // what a name names: "engine"
	Name  string   // the name asked for
	Known []string // the registered names, sorted
}

// Suggestion is the nearest known name within two edits, or "".
func (e *UnknownError) Suggestion() string {
	s, _ := suggest.Nearest(e.Name, e.Known, 3)
	return s
}

// Detail is the message without the name: `unknown engine (did you mean
// "flow"?); known: flow, packet`, for callers that put the name where
// their format wants it (a field, a file:line).
func (e *UnknownError) Detail() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("unknown %s%s; known: %s", e.What, suggest.DidYouMean(e.Name, e.Known, 3), known)
}

func (e *UnknownError) Error() string { return fmt.Sprintf("%q: %s", e.Name, e.Detail()) }
