package qosdriver

import (
	"errors"
	"fmt"

	"github.com/labctl/labctl/internal/registry"
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
	byName  *registry.Registry[Driver]
	byOS    *registry.Registry[string] // os -> driver name
	byModel *registry.Registry[string] // model -> driver name
	def     string
}

// New is an empty registry whose switches without qos_driver, a known
// os or a known model use driver def (which must be registered before
// Pick is asked).
func New(def string) *Registry {
	return &Registry{byName: registry.New[Driver]("switch QoS driver"), byOS: registry.New[string]("switch OS"),
		byModel: registry.New[string]("switch model"), def: def}
}

// Register adds d. A name, OS or model another driver has is refused.
func (r *Registry) Register(d Driver) error {
	if d.Name == "" {
		return fmt.Errorf("qosdriver: a driver needs a name")
	}
	// checked before any is added, so a refused driver leaves nothing
	if _, dup := r.byName.Lookup(d.Name); dup {
		return fmt.Errorf("qosdriver: driver %q is registered twice", d.Name)
	}
	for _, os := range d.OS {
		if prev, dup := r.byOS.Lookup(os); dup {
			return fmt.Errorf("qosdriver: os %q is claimed by %s and %s", os, prev, d.Name)
		}
	}
	for _, m := range d.Models {
		if prev, dup := r.byModel.Lookup(m); dup {
			return fmt.Errorf("qosdriver: model %q is claimed by %s and %s", m, prev, d.Name)
		}
	}
	errs := []error{r.byName.Register(d.Name, d)}
	for _, os := range d.OS {
		errs = append(errs, r.byOS.Register(os, d.Name))
	}
	for _, m := range d.Models {
		errs = append(errs, r.byModel.Register(m, d.Name))
	}
	return errors.Join(errs...) // nil: the duplicates were refused above
}

// Names lists the drivers, sorted.
func (r *Registry) Names() []string { return r.byName.Names() }

// OSNames lists the os: values some driver serves, sorted.
func (r *Registry) OSNames() []string { return r.byOS.Names() }

// Lookup is the driver named name, or an *Error naming the known ones.
func (r *Registry) Lookup(name string) (Driver, error) {
	d, err := r.byName.Get(name)
	return d, fieldError("qos_driver", err)
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
		d, err := r.byOS.Get(os)
		return d, fieldError("os", err)
	}
	if d, ok := r.byModel.Lookup(model); ok && model != "" {
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

// fieldError is a registry's unknown-name error as an *Error on the
// inventory field key; other errors (none today) pass unchanged.
func fieldError(key string, err error) error {
	var u *registry.UnknownError
	if !errors.As(err, &u) {
		return err
	}
	return &Error{Key: key, Value: u.Name, Msg: u.Detail()}
}
