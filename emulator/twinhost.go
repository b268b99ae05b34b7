package emulator

import (
	"fmt"
	"maps"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/hostlb/hostschemes"
)

// Every emulated host's RNIC runs the host module an RNIC profile names
// (host_lb), which a scenario's emulation section carries to the lab it
// starts, on top of whatever its switches' images run. The flow engine
// has no RNIC model to run one.

// hostLBSetter is an engine whose hosts can run host modules.
type hostLBSetter interface {
	SetHostLB(host string, m hostlb.Module) error
}

// SetHostLB makes every host's RNIC run host module name with params in
// the twin from the next schedule on ("" for none); an unknown module or
// parameter is an error naming the known ones.
func (l *Lab) SetHostLB(name string, params map[string]string) error {
	t := l.twin
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.engine.(hostLBSetter)
	if !ok {
		if name == "" {
			return nil
		}
		return fmt.Errorf("emulator: host module %s needs the packet engine (the flow engine models no RNIC)", name)
	}
	reg, err := hostschemes.Registry()
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	if name != "" { // refuse before any host changes
		if _, err := reg.New(name, params); err != nil {
			return fmt.Errorf("emulator: %w", err)
		}
	}
	for _, h := range l.inv.Hosts {
		var m hostlb.Module
		if name != "" {
			m, _ = reg.New(name, params) // one per host, as each RNIC runs its own
		}
		if err := e.SetHostLB(h.Name, m); err != nil {
			return fmt.Errorf("emulator: %w", err)
		}
	}
	t.hostLB = lbChoice{scheme: name, params: maps.Clone(params)}
	l.log.Info("twin: host module set", "module", name, "params", params)
	return nil
}

// HostLB is the host module and parameters every host runs in the twin
// ("" for none).
func (l *Lab) HostLB() (name string, params map[string]string) {
	l.twin.mu.Lock()
	defer l.twin.mu.Unlock()
	return l.twin.hostLB.scheme, maps.Clone(l.twin.hostLB.params)
}
