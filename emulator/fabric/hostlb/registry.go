package hostlb

import (
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Scheme is one registered host module: its name, a line of help, its
// factory and its parameters, and whether real ConnectX firmware runs it.
type Scheme struct {
	Name   string
	Help   string
	New    func(p lb.Params) (Module, error)
	Params []lb.Param
	// ConnectX says the scheme runs on a stock ConnectX RNIC (firmware
	// and driver settings alone); a scheme that needs a programmable NIC
	// (a SmartNIC, a DPU) is twin-only until the lab has one, and a plan
	// that gives it to real hosts is refused.
	ConnectX bool
	// Needs says in words what a host needs to run it ("" with ConnectX).
	Needs string
}

// Registry maps host module names to modules, with lb's rules: duplicates
// refused, unknown names answered with the known ones and a did-you-mean,
// declared parameters checked.
type Registry struct {
	c    *lb.Catalog[Module]
	info map[string]Scheme
}

// NewRegistry is an empty registry.
func NewRegistry() *Registry {
	return &Registry{c: lb.NewCatalog[Module]("hostlb", "host module"), info: map[string]Scheme{}}
}

// Register adds a scheme.
func (r *Registry) Register(s Scheme) error {
	if err := r.c.Register(lb.Entry[Module]{Name: s.Name, Help: s.Help, New: s.New, Params: s.Params}); err != nil {
		return err
	}
	r.info[s.Name] = s
	return nil
}

// Names lists the registered schemes, sorted.
func (r *Registry) Names() []string { return r.c.Names() }

// Scheme is a registered scheme by name.
func (r *Registry) Scheme(name string) (Scheme, bool) {
	s, ok := r.info[name]
	return s, ok
}

// Problems are the problems with a scheme's name and parameters, one per
// parameter (Param "" for the name), in parameter order.
func (r *Registry) Problems(name string, params map[string]string) []*lb.ParamError {
	return r.c.Problems(name, params)
}

// New makes a module of a registered scheme.
func (r *Registry) New(name string, params map[string]string) (Module, error) {
	return r.c.New(name, params)
}

// CheckHardware refuses a scheme that real ConnectX firmware cannot run,
// for a profile bound to real hosts; nil for an unknown name (Problems
// says so) or one ConnectX runs.
func (r *Registry) CheckHardware(name string) error {
	s, ok := r.info[name]
	if !ok || s.ConnectX {
		return nil
	}
	return fmt.Errorf("host module %s runs only in the fabric twin: real ConnectX firmware cannot run it (%s); use an emulated lab, or drop host_lb for hardware", name, s.Needs)
}
