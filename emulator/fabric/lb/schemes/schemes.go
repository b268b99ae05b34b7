package schemes

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/conga"
	"github.com/labctl/labctl/emulator/fabric/lb/conweave"
	"github.com/labctl/labctl/emulator/fabric/lb/drill"
	"github.com/labctl/labctl/emulator/fabric/lb/ecmp"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/gemma"
	"github.com/labctl/labctl/emulator/fabric/lb/letflow"
	"github.com/labctl/labctl/emulator/fabric/lb/reunion"
	"github.com/labctl/labctl/emulator/fabric/lb/selb"
)

// Registry is a registry of every scheme.
func Registry() (*lb.Registry, error) {
	r := lb.NewRegistry()
	for _, reg := range []func(*lb.Registry) error{ // a new scheme adds its Register here
		ecmp.Register,
		letflow.Register,
		drill.Register,
		conga.Register,
		conweave.Register,
		selb.Register,
		gemma.Register,
		reunion.Register,
		flb.Register,
	} {
		if err := reg(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustRegistry is Registry for callers whose schemes are compiled in: a
// failure is a programming error (a duplicate name, a bad default).
func MustRegistry() *lb.Registry {
	r, err := Registry()
	if err != nil {
		panic(err)
	}
	return r
}
