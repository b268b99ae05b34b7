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

// applyQoS makes a switch's committed QoS configuration take effect in the
// twin. The twin has one configuration for the whole fabric, so the switch
// committed last sets it for all (a lab provisions every switch alike).
func (l *Lab) applyQoS(device string, running *netconfd.Tree) {
	q, err := netconf.ParseQoS(running.XML())
	if err != nil {
		l.log.Warn("twin: cannot read the committed QoS", "device", device, "err", err)
		return
	}
	l.twin.configure(device, q)
}

// roceQueue is the queue (= priority) the twin carries RoCE traffic on.
const roceQueue = 3

// configure maps a switch QoS configuration onto the twin's knobs. What the
// twin does not model it approximates with the nearest knob:
//   - the twin has one shared buffer per switch: the lossless and lossy
//     pools together size it (BufferBytes);
//   - a dynamic PFC threshold sets PFCAlpha and lifts the static XOFF/XON
//     out of the way (the packet engine pauses at min(XOFF, alpha x free));
//   - ECN marking follows the RoCE queue's profile;
//   - the DSCP map is not modelled: the twin classifies by the flows'
//     priority (RoCE on 3), so the map is checked and stored only.
//
// The twin in this version has one configuration for the whole fabric, so
// device is not used yet: the switch configured last sets it for all (a lab
// provisions every switch alike). Only per-switch fields of the fabric's
// configuration are set, so an engine that keeps them per switch can take
// this mapping as it is.
func (t *Twin) configure(device string, q switchqos.Config) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.engine.(configurable)
	if !ok {
		return
	}
	e.Configure(func(c *fabric.Config) {
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
	})
}
