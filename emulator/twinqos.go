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

// applyQoS makes a switch's committed QoS configuration take effect in the
// twin. The twin has one configuration for the whole fabric, so the switch
// committed last sets it for all (a lab provisions every switch alike).
func (l *Lab) applyQoS(device string, running *netconfd.Tree) {
	q, err := netconf.ParseQoS(running.XML())
	if err != nil {
		l.log.Warn("twin: cannot read the committed QoS", "device", device, "err", err)
		return
	}
	l.twin.configure(q)
}

func (t *Twin) configure(q netconf.QoS) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.engine.(configurable)
	if !ok {
		return
	}
	e.Configure(func(c *fabric.Config) {
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
	})
}
