package emulator

import (
	"math"

	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/drivers/qosdriver"
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

// roceQueue is the queue (= priority) the twin carries RoCE traffic on.
const roceQueue = 3

// defaultQoS is the twin's default switch settings (fabric.DefaultConfig)
// in the switch QoS model, as a device that counts its buffer in cells of
// cell bytes holds them (1: in bytes). Every emulated switch starts with
// it, in its NETCONF running config and in its SDE tables, so that a fresh
// lab reads back what it behaves as. Thresholds are rounded up to whole
// cells, as the SDE driver writes them; the two pools split the buffer in
// halves rounded down, so that they fit it.
func defaultQoS(cell int64) switchqos.Config {
	d := fabric.DefaultConfig().SwitchConfig
	q := switchqos.Config{XoffBytes: d.XoffBytes, XonBytes: d.XonBytes, HeadroomBytes: d.HeadroomBytes,
		ECN: map[int]switchqos.ECN{roceQueue: {KminBytes: d.ECNKminBytes, KmaxBytes: d.ECNKmaxBytes,
			PmaxPercent: int(math.Round(d.ECNPmax * 100))}},
		Scheduler: switchqos.Strict}
	for p := range q.PFC {
		q.PFC[p] = d.PFC && d.LosslessPrios&(1<<p) != 0
	}
	q = q.Quantize(cell)
	half := d.BufferBytes / 2 / max(cell, 1) * max(cell, 1)
	q.Pools = map[string]int64{switchqos.PoolLossless: half, switchqos.PoolLossy: half}
	return q
}

// twinFollowsNETCONF says whether a switch's NETCONF running config drives
// its part of the twin; otherwise the surface of the driver the lab picks
// for it does (its SDE tables, its SONiC config_db). Writes through
// another surface are kept by the device but do not reach the twin, so
// that one source describes it.
func (l *Lab) twinFollowsNETCONF(device string) bool { return l.twinFollows(device, qosdriver.NETCONF) }

// twinFollows says whether driver's surface drives device's part of the twin.
func (l *Lab) twinFollows(device, driver string) bool { return l.qosDriver(device) == driver }

// qosDriver is the driver the lab picks for a switch (drivers/qosdriver);
// a switch the registry refuses is served as a NETCONF switch.
func (l *Lab) qosDriver(device string) string {
	sw, _ := l.inv.Switch(device)
	name, err := qosdriver.Builtin().Pick(sw.QoSDriver, sw.OS, sw.Model)
	if err != nil {
		return qosdriver.NETCONF
	}
	return name
}

// applyQoS makes a switch's NETCONF running configuration (after a
// commit, a confirmed commit's rollback, at start) take effect in the twin.
func (l *Lab) applyQoS(device string, running *netconfd.Tree) {
	if !l.twinFollowsNETCONF(device) {
		return
	}
	q, err := netconf.ParseQoS(running.XML())
	if err != nil {
		l.log.Warn("twin: cannot read the committed QoS", "device", device, "err", err)
		return
	}
	if err := l.twin.configure(device, q); err != nil {
		l.log.Warn("twin: cannot apply the committed QoS", "device", device, "err", err)
	}
}

// configure rebuilds a switch's QoS in the twin from the switch's whole
// configuration q (twinSwitch): on that switch alone with the packet
// engine; with the flow engine, which has one configuration for the whole
// fabric, the switch configured last sets it for all.
func (t *Twin) configure(device string, q switchqos.Config) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn := func(c *fabric.SwitchConfig) { twinSwitch(c, q) }
	switch e := t.engine.(type) {
	case switchConfigurable:
		return e.ConfigureSwitch(device, fn)
	case configurable:
		e.Configure(func(c *fabric.Config) { fn(&c.SwitchConfig) })
	}
	return nil
}

// twinSwitch sets every QoS knob of c from a switch's whole configuration
// q: the twin's default, overridden by what q holds, so that nothing of an
// earlier configuration survives a change (or its rollback). A queue
// without an ECN entry marks nothing. What the twin does not model it
// approximates with the nearest knob:
//   - the twin has one shared buffer per switch: the lossless and lossy
//     pools together size it (BufferBytes);
//   - a dynamic PFC threshold sets PFCAlpha and lifts the static XOFF/XON
//     out of the way (the packet engine pauses at min(XOFF, alpha x free));
//   - the twin has one set of ECN thresholds per switch: those of the
//     RoCE queue (else of the lowest queue with an entry), applied on
//     every queue with an entry;
//   - a DSCP map classifies the flows whose traffic class is known (the
//     RNIC profile's roce_tos, sent as perftest --tclass); without a map
//     a packet keeps the priority its RNIC sent it on (Lab.nicPriority).
func twinSwitch(c *fabric.SwitchConfig, q switchqos.Config) {
	d := fabric.DefaultConfig().SwitchConfig
	mask := q.PFCMask()
	c.PFC, c.LosslessPrios = mask != 0, mask
	c.BufferBytes = d.BufferBytes
	if pools := q.Pools[switchqos.PoolLossless] + q.Pools[switchqos.PoolLossy]; pools > 0 {
		c.BufferBytes = pools
	}
	c.XoffBytes, c.XonBytes, c.PFCAlpha = d.XoffBytes, d.XonBytes, d.PFCAlpha
	switch {
	case q.Alpha > 0:
		c.PFCAlpha = q.Alpha
		c.XoffBytes, c.XonBytes = c.BufferBytes, c.BufferBytes
	case q.XoffBytes > 0:
		c.XoffBytes, c.XonBytes = q.XoffBytes, q.XonBytes // under the buffer's own limit (default alpha)
	}
	c.HeadroomBytes = d.HeadroomBytes
	if q.HeadroomBytes > 0 {
		c.HeadroomBytes = q.HeadroomBytes
	}
	c.Scheduler = d.Scheduler
	if q.Scheduler == switchqos.DWRR {
		c.Scheduler = "dwrr"
	}
	c.DWRRWeights = d.DWRRWeights
	for queue, w := range q.Weights {
		if queue >= 0 && queue < 8 {
			c.DWRRWeights[queue] = w
		}
	}
	c.ECNKminBytes, c.ECNKmaxBytes, c.ECNPmax, c.ECNPrios = 0, 0, 0, 0
	ecnQueue := -1
	for queue := range q.ECN {
		if queue >= 0 && queue < 8 {
			c.ECNPrios |= 1 << queue
			if ecnQueue < 0 || queue < ecnQueue {
				ecnQueue = queue
			}
		}
	}
	if _, ok := q.ECN[roceQueue]; ok {
		ecnQueue = roceQueue
	}
	if ecn, ok := q.ECN[ecnQueue]; ok {
		c.ECNKminBytes, c.ECNKmaxBytes, c.ECNPmax = ecn.KminBytes, ecn.KmaxBytes, float64(ecn.PmaxPercent)/100
	}
	c.DSCPMap, c.DSCPToTC = len(q.DSCP) > 0, [64]uint8{}
	for d, tc := range q.DSCP {
		if d >= 0 && d < 64 && tc >= 0 && tc < 8 {
			c.DSCPToTC[d] = uint8(tc)
		}
	}
}
