package fabric

import (
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// The RNIC model's side of the host module interface (package hostlb): a
// host may run a module that sees each data packet of its QPs as it is
// about to leave (and may hold it, or change its UDP source port), acts
// on its QPs (pause, resume, rate), and takes notifications switch
// modules send to it (lb.Switch.Notify). A QP whose host runs none keeps
// a nil qp.host: it pays one pointer test per packet sent.

// HostModules makes host modules by name and parameters: the caller's
// registry (a *hostlb.Registry).
type HostModules interface {
	New(name string, params map[string]string) (hostlb.Module, error)
}

// hostMod is a host's module and the optional hooks it implements.
type hostMod struct {
	m      hostlb.Module
	notify hostlb.Notified
	tick   hostlb.Ticker
	reset  hostlb.Resetter
	view   *hostView
}

// hostState is the engine's host modules: per host (hostID), nil for a
// host without one; the views they are handed; what they did this run.
type hostState struct {
	mods  []*hostMod
	names []string // by host index
	pv    hostlb.Packet
	stats HostStats
}

// HostStats is what the hosts' modules did in a run.
type HostStats struct {
	Held          uint64 // data packets held (Send returned > 0)
	HeldNs        int64  // their holds, summed
	MaxHoldNs     int64  // the longest hold
	PortChanges   uint64 // packets that changed their QP's UDP source port
	Notifications uint64 // notifications delivered to a module
	Pauses        uint64 // QPs paused
}

// HostStats is what the hosts' modules did in the last run.
func (e *PacketEngine) HostStats() HostStats { return e.host.stats }

// initHosts names the hosts by index and gives each the module cfg names.
func (e *PacketEngine) initHosts(cfg Config) error {
	e.host.mods = make([]*hostMod, len(e.hostID))
	e.host.names = make([]string, len(e.hostID))
	for n, id := range e.hostID {
		e.host.names[id] = n
	}
	if cfg.HostLB == "" {
		return nil
	}
	if cfg.HostModules == nil {
		return fmt.Errorf("fabric: host module %q but no host module registry (Config.HostModules)", cfg.HostLB)
	}
	for id := range e.host.mods {
		m, err := cfg.HostModules.New(cfg.HostLB, cfg.HostLBParams)
		if err != nil {
			return err
		}
		e.setHostModule(int32(id), m)
	}
	return nil
}

func (e *PacketEngine) setHostModule(id int32, m hostlb.Module) {
	if m == nil {
		e.host.mods[id] = nil
		return
	}
	h := &hostMod{m: m, view: &hostView{e: e, id: id, name: e.host.names[id]}}
	h.notify, _ = m.(hostlb.Notified)
	h.tick, _ = m.(hostlb.Ticker)
	h.reset, _ = m.(hostlb.Resetter)
	e.host.mods[id] = h
}

// SetHostLB makes one host's RNIC run m from the next run on (nil: none),
// its state afresh.
func (e *PacketEngine) SetHostLB(name string, m hostlb.Module) error {
	id, err := lookup(e.hostID, "host", name)
	if err != nil {
		return err
	}
	e.setHostModule(id, m)
	return nil
}

// bindHost gives a new run's QP its sending host's module.
func (e *PacketEngine) bindHost(q *qp) { q.host = e.host.mods[q.srcIdx] }

// resetHosts tells every host module a run starts.
func (e *PacketEngine) resetHosts() {
	e.host.stats = HostStats{}
	for _, h := range e.host.mods {
		if h != nil && h.reset != nil {
			h.reset.Reset(h.view)
		}
	}
}

// srcPort is the UDP source port q's packets leave with: the module's
// choice, or one drawn from the flow's hash in the range RoCE v2 NICs use.
func srcPort(q *qp) uint16 {
	if q.sport != 0 {
		return q.sport
	}
	return defaultPort(q)
}

func defaultPort(q *qp) uint16 { return uint16(0xc000 | q.fwdKey&0x3fff) }

// dataKey is the hash a data packet is forwarded by: its QP's, or, once
// the host moved the QP to another source port, one of that port.
func dataKey(fwdKey uint64, p *packet) uint64 {
	if p.sport == 0 {
		return fwdKey
	}
	return mix(fwdKey ^ uint64(p.sport)<<40)
}

// hostPass asks q's host module about the data packet psn that is about
// to leave: true to send it now; false when the module holds it (the
// pacing event brings it back, passed) or paused the QP.
func (e *PacketEngine) hostPass(q *qp, psn int64) bool {
	if q.passed {
		q.passed = false
		return true
	}
	h := q.host
	v := &e.host.pv
	port := srcPort(q)
	*v = hostlb.Packet{Flow: q.idx, PSN: psn, Bytes: e.payloadOf(q, psn) + int32(e.cfg.HeaderBytes),
		Last: psn == q.npkts-1, Retx: psn < q.highest, SrcPort: port, Dst: q.flow.Dst, Switch: -1}
	hold := h.m.Send(h.view, v)
	if v.SrcPort != port {
		q.sport = v.SrcPort
		if v.SrcPort == defaultPort(q) {
			q.sport = 0
		}
		e.host.stats.PortChanges++
	}
	if q.paused || q.senderDone {
		return false
	}
	if hold > 0 {
		st := &e.host.stats
		st.Held++
		st.HeldNs += hold
		st.MaxHoldNs = max(st.MaxHoldNs, hold)
		q.passed = true
		q.nextSend = e.now + hold*1000
		e.paceAt(q)
		return false
	}
	return true
}

// pktNotify is a notification from a switch module to a flow's sender
// (lb.Switch.Notify): it travels like a CNP, on the control priority,
// hashed by the flow's reverse key and unseen by the switches' modules.
const pktNotify = pktCtl + 1

// Notify implements lb.Switch.
func (v *swView) Notify(p *lb.Packet, bytes int, h *lb.Header) bool {
	e := v.e
	if p.Flow < 0 || int(p.Flow) >= len(e.qps) || e.qps[p.Flow].senderDone {
		return false
	}
	k := e.pool.get()
	k.kind, k.qp, k.prio, k.inLink, k.psn = pktNotify, p.Flow, ctrlPrio, -1, int64(v.id)
	k.wire = int32(max(bytes, 64))
	k.hdr = *h
	k.hdr.Flags &^= lb.FlagPinned
	out, _ := e.forward(v.id, k)
	e.enqueue(&e.swc[v.id], v.id, -1, out, k, lb.Normal)
	return true
}

// hostNotified hands a notification that reached its flow's sender to the
// sender's module, and frees it.
func (e *PacketEngine) hostNotified(p *packet) {
	q := e.qps[p.qp]
	if h := e.host.mods[q.srcIdx]; h != nil && h.notify != nil {
		e.host.stats.Notifications++
		v := &e.host.pv
		*v = hostlb.Packet{Flow: q.idx, Bytes: p.wire, SrcPort: srcPort(q), Dst: q.flow.Dst, Switch: int(p.psn), Hdr: &p.hdr}
		h.notify.Notify(h.view, v)
	}
	e.pool.put(p)
}

// hostTickID is a host timer's event id: below every switch's.
func hostTickID(host int32) int32 { return -host - 1 }

func (e *PacketEngine) onHostTick(id int32, arg int64) {
	if h := e.host.mods[-id-1]; h != nil && h.tick != nil {
		h.tick.Tick(h.view, arg)
	}
}

// hostView is a module's view of its host (hostlb.Host).
type hostView struct {
	e    *PacketEngine
	id   int32
	name string
}

var _ hostlb.Host = (*hostView)(nil)

func (v *hostView) Name() string { return v.name }
func (v *hostView) ID() int      { return int(v.id) }
func (v *hostView) Now() int64   { return v.e.now / 1000 }

// qp is the host's QP of a flow; a module naming another host's flow, or
// none, fails the run.
func (v *hostView) qp(flow int32) *qp {
	e := v.e
	if flow < 0 || int(flow) >= len(e.qps) || e.qps[flow].srcIdx != v.id {
		e.failf("fabric: host module of %s acted on flow %d, not one of its own", v.name, flow)
		return nil
	}
	return e.qps[flow]
}

func (v *hostView) LineGbps(flow int32) float64 {
	if q := v.qp(flow); q != nil {
		return q.line
	}
	return 0
}

func (v *hostView) Rate(flow int32) float64 {
	if q := v.qp(flow); q != nil {
		return q.rate
	}
	return 0
}

func (v *hostView) SetRate(flow int32, gbps float64) {
	if q := v.qp(flow); q != nil && gbps > 0 {
		v.e.setRate(q, min(gbps, q.line))
	}
}

func (v *hostView) Pause(flow int32) {
	if q := v.qp(flow); q != nil && !q.paused {
		q.paused = true
		v.e.host.stats.Pauses++
	}
}

// Resume lets a paused QP send again: at its pacing time, or now if that
// has passed (through a pacing event, so that a module's call never sends
// from within its own hook).
func (v *hostView) Resume(flow int32) {
	q := v.qp(flow)
	if q == nil || !q.paused {
		return
	}
	q.paused = false
	if q.started && !q.senderDone {
		q.nextSend = max(q.nextSend, v.e.now)
		v.e.paceAt(q)
	}
}

func (v *hostView) Paused(flow int32) bool {
	q := v.qp(flow)
	return q != nil && q.paused
}

func (v *hostView) Schedule(d int64, arg int64) {
	p := v.e.pool.get()
	p.psn = arg
	v.e.ev.push(event{t: v.e.now + d*1000, key: uint64(evLBTick), id: hostTickID(v.id), pkt: p})
}
