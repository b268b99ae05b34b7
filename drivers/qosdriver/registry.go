package qosdriver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/suggest"
)

// Driver is one switch QoS driver as a lab names it.
type Driver struct {
	// Name is what a switch's qos_driver says.
	Name string
	// OS lists the values of a switch's os: that pick this driver when
	// qos_driver is not set.
	OS []string
	// Models lists switch models that pick it when neither qos_driver
	// nor os is set.
	Models []string
	// About is one line for help and docs.
	About string
}

// Registry holds the drivers; a name, OS or model belongs to one driver.
type Registry struct {
	byName  map[string]Driver
	byOS    map[string]string
	byModel map[string]string
	def     string
}

// New is an empty registry whose switches without qos_driver, a known
// os or a known model use driver def (which must be registered before
// Pick is asked).
func New(def string) *Registry {
	return &Registry{byName: map[string]Driver{}, byOS: map[string]string{}, byModel: map[string]string{}, def: def}
}

// Register adds d. A name, OS or model another driver has is refused.
func (r *Registry) Register(d Driver) error {
	if d.Name == "" {
		return fmt.Errorf("qosdriver: a driver needs a name")
	}
	if _, dup := r.byName[d.Name]; dup {
		return fmt.Errorf("qosdriver: driver %q is registered twice", d.Name)
	}
	for _, os := range d.OS {
		if prev, dup := r.byOS[os]; dup {
			return fmt.Errorf("qosdriver: os %q is claimed by %s and %s", os, prev, d.Name)
		}
	}
	for _, m := range d.Models {
		if prev, dup := r.byModel[m]; dup {
			return fmt.Errorf("qosdriver: model %q is claimed by %s and %s", m, prev, d.Name)
		}
	}
	r.byName[d.Name] = d
	for _, os := range d.OS {
		r.byOS[os] = d.Name
	}
	for _, m := range d.Models {
		r.byModel[m] = d.Name
	}
	return nil
}

// Names lists the drivers, sorted.
func (r *Registry) Names() []string { return sortedKeys(r.byName) }

// OSNames lists the os: values some driver serves, sorted.
func (r *Registry) OSNames() []string { return sortedKeys(r.byOS) }

// Lookup is the driver named name, or an *Error naming the known ones.
func (r *Registry) Lookup(name string) (Driver, error) {
	d, ok := r.byName[name]
	if !ok {
		return Driver{}, unknown("qos_driver", name, "switch QoS driver", r.Names())
	}
	return d, nil
}

// Pick is the driver of a switch: its qos_driver if set, else the one
// serving its os, else the one serving its model, else the default. An
// unknown qos_driver or os is an *Error; a model no driver claims is
// not (models are many; the os decides).
func (r *Registry) Pick(qosDriver, os, model string) (string, error) {
	switch {
	case qosDriver != "":
		_, err := r.Lookup(qosDriver)
		return qosDriver, err
	case os != "":
		if d, ok := r.byOS[os]; ok {
			return d, nil
		}
		return "", unknown("os", os, "switch OS", r.OSNames())
	}
	if d, ok := r.byModel[model]; ok && model != "" {
		return d, nil
	}
	return r.def, nil
}

// Error is a switch field naming nothing the registry knows.
type Error struct {
	Key   string // the inventory field: qos_driver or os
	Value string
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.Msg) }

// Field is the inventory field the error is about.
func (e *Error) Field() string { return e.Key }

func unknown(key, value, what string, known []string) *Error {
	return &Error{Key: key, Value: value, Msg: fmt.Sprintf("unknown %s%s; known: %s",
		what, suggest.DidYouMean(value, known, 3), strings.Join(known, ", "))}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
