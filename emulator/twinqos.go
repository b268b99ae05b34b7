package emulator

import (
	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/drivers/switchqos"
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
// twin.
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

// roceQueue is the queue (= priority) the twin carries RoCE traffic on.
const roceQueue = 3

// configure maps a switch QoS configuration onto the twin's knobs: on that
// switch alone with the packet engine; with the flow engine, which has one
// configuration for the whole fabric, the switch configured last sets it
// for all. What the twin does not model it approximates with the nearest
// knob:
//   - the twin has one shared buffer per switch: the lossless and lossy
//     pools together size it (BufferBytes);
//   - a dynamic PFC threshold sets PFCAlpha and lifts the static XOFF/XON
//     out of the way (the packet engine pauses at min(XOFF, alpha x free));
//   - ECN marking follows the RoCE queue's profile;
//   - the DSCP map is not modelled: the twin classifies by the flows'
//     priority (RoCE on 3), so the map is checked and stored only.
func (t *Twin) configure(device string, q switchqos.Config) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn := func(c *fabric.SwitchConfig) {
		mask := q.PFCMask()
		c.PFC = mask != 0
		if mask != 0 {
			c.LosslessPrios = mask
		}
		if pools := q.Pools[switchqos.PoolLossless] + q.Pools[switchqos.PoolLossy]; pools > 0 {
			c.BufferBytes = pools
		}
		switch {
		case q.Alpha > 0:
			c.PFCAlpha = q.Alpha
			c.XoffBytes, c.XonBytes = c.BufferBytes, c.BufferBytes
		case q.XoffBytes > 0:
			c.XoffBytes, c.XonBytes = q.XoffBytes, q.XonBytes
			c.PFCAlpha = fabric.DefaultConfig().PFCAlpha // the buffer's own limit, below the static XOFF
		}
		if q.HeadroomBytes > 0 {
			c.HeadroomBytes = q.HeadroomBytes
		}
		if q.Scheduler != "" {
			c.Scheduler = q.Scheduler
		}
		for queue, w := range q.Weights {
			if queue >= 0 && queue < 8 {
				c.DWRRWeights[queue] = w
			}
		}
		if ecn, ok := q.ECN[roceQueue]; ok {
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
