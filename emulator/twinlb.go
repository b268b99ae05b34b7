package emulator

import (
	"maps"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Each emulated switch forwards in the twin with the load-balancing module
// of the image it last started (fabric.PacketEngine.SetSwitchLB), or with
// the lab's default (Options.LB) until it starts one. A partial image
// rollback thus leaves a mixed fabric, as on hardware.

// lbChoice is a switch's scheme and its parameters.
type lbChoice struct {
	scheme string
	params map[string]string
}

// lbSetter is an engine whose switches can forward with different modules.
type lbSetter interface {
	SetSwitchLB(name string, m lb.Module) error
}

// setImageLB makes the scheme of an image a switch loaded that switch's in
// the twin; an error means the twin has no module for it.
func (l *Lab) setImageLB(device string, m *tofino.Manifest) error {
	mod, err := l.schemes.New(schemeName(m.LB.Scheme), m.LB.Params)
	if err != nil {
		return err
	}
	t := l.twin
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.engine.(lbSetter)
	if !ok {
		l.log.Warn("twin: the flow engine has no load-balancing modules; the image's scheme takes effect on the packet engine",
			"device", device, "image", m.Ref(), "scheme", m.LB.Scheme)
		return nil
	}
	if err := e.SetSwitchLB(device, mod); err != nil {
		return err
	}
	l.lbs[device] = lbChoice{scheme: schemeName(m.LB.Scheme), params: maps.Clone(m.LB.Params)}
	l.log.Info("twin: load balancing set by a switch image", "device", device, "image", m.Ref(), "scheme", m.LB.Scheme)
	return nil
}

// SwitchLB is the scheme and parameters a switch forwards with in the
// twin; "" on the flow engine, which has none.
func (l *Lab) SwitchLB(device string) (scheme string, params map[string]string) {
	l.twin.mu.Lock()
	defer l.twin.mu.Unlock()
	c := l.lbs[device]
	return c.scheme, maps.Clone(c.params)
}

// FabricLB is the scheme and parameters every switch forwards with in the
// twin, "mixed" (no parameters) when switches differ, and "" on the flow
// engine.
func (l *Lab) FabricLB() (scheme string, params map[string]string) {
	l.twin.mu.Lock()
	defer l.twin.mu.Unlock()
	first := true
	var c lbChoice
	for _, sw := range l.inv.Switches {
		s, ok := l.lbs[sw.Name]
		if !ok {
			return "", nil
		}
		if first {
			c, first = s, false
		} else if s.scheme != c.scheme || !maps.Equal(s.params, c.params) {
			return "mixed", nil
		}
	}
	return c.scheme, maps.Clone(c.params)
}

// schemeName is the registry's name of an image's scheme ("" is ECMP).
func schemeName(scheme string) string {
	if scheme == "" {
		return "ecmp"
	}
	return scheme
}
