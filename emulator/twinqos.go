package emulator

import (
	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/netconfd"
)

// configurable is an engine whose configuration can change between runs.
type configurable interface {
	Configure(func(*fabric.Config))
}

// switchConfigurable is an engine that keeps settings per switch (the
// packet engine).
type switchConfigurable interface {
	ConfigureSwitch(name string, fn func(*fabric.SwitchConfig)) error
}

// applyQoS makes a switch's committed QoS configuration take effect in the
// twin: on that switch alone with the packet engine; with the flow engine,
// which has one configuration for the whole fabric, the switch committed
// last sets it for all.
func (l *Lab) applyQoS(device string, running *netconfd.Tree) {
	q, err := netconf.ParseQoS(running.XML())
	if err != nil {
		l.log.Warn("twin: cannot read the committed QoS", "device", device, "err", err)
		return
	}
	if err := l.twin.configure(device, q); err != nil {
		l.log.Warn("twin: cannot apply the committed QoS", "device", device, "err", err)
	}
}

func (t *Twin) configure(device string, q netconf.QoS) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn := func(c *fabric.SwitchConfig) {
		var mask uint8
		for p, on := range q.PFC {
			if on {
				mask |= 1 << p
			}
		}
		c.PFC = mask != 0
		if mask != 0 {
			c.LosslessPrios = mask
		}
		if q.XoffBytes > 0 {
			c.XoffBytes = q.XoffBytes
		}
		if q.XonBytes > 0 {
			c.XonBytes = q.XonBytes
		}
		if ecn, ok := q.ECN[3]; ok { // the RoCE queue
			c.ECNKminBytes, c.ECNKmaxBytes, c.ECNPmax = ecn.KminBytes, ecn.KmaxBytes, float64(ecn.PmaxPercent)/100
		}
	}
	switch e := t.engine.(type) {
	case switchConfigurable:
		return e.ConfigureSwitch(device, fn)
	case configurable:
		e.Configure(func(c *fabric.Config) { fn(&c.SwitchConfig) })
	}
	return nil
}
