package emulator

import (
	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/inventory"
)

// Registries are the registries a lab file's names are checked against
// (inventory.Lab.ValidateAgainst): the QoS drivers provision opens and
// the emulated switches serve, and the engines and modules Start builds
// the twin from.
func Registries() inventory.Registries {
	return inventory.Registries{
		QoSDrivers: qosdriver.Builtin(),
		Engines: func(name string) (bool, error) {
			k, err := fabric.Engines().Get(name)
			return k.Packets, err
		},
		LB:     moduleCheck(schemes.MustRegistry()),
		HostLB: moduleCheck(hostschemes.MustRegistry()),
	}
}

// moduleCheck is a module registry's Problems as inventory's.
func moduleCheck(reg interface {
	Problems(name string, params map[string]string) []*lb.ParamError
}) func(string, map[string]string) []inventory.ParamProblem {
	return func(name string, params map[string]string) []inventory.ParamProblem {
		var out []inventory.ParamProblem
		for _, p := range reg.Problems(name, params) {
			out = append(out, inventory.ParamProblem{Param: p.Param, Msg: p.Msg})
		}
		return out
	}
}
