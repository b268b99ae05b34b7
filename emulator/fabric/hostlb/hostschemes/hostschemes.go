package hostschemes

import (
	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/hostlb/flbrc"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hf2t"
)

// Registry is a registry of every host module.
func Registry() (*hostlb.Registry, error) {
	r := hostlb.NewRegistry()
	for _, reg := range []func(*hostlb.Registry) error{ // a new module adds its Register here
		hf2t.Register,
		flbrc.Register,
	} {
		if err := reg(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustRegistry is Registry for callers whose modules are compiled in: a
// registration error is a programming error.
func MustRegistry() *hostlb.Registry {
	r, err := Registry()
	if err != nil {
		panic(err)
	}
	return r
}
